import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { errorOf, listenLocally, makeApp, type TestApp } from '../helpers/app.js'
import { openSocket, readUntilClose } from '../helpers/raw-http.js'
import { storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('health checks on $name', (kind) => {
  let t: TestApp
  beforeAll(async () => {
    t = await makeApp(kind)
  })
  afterAll(() => t.close())

  it('answers liveness and readiness without a token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).body).toBe('{"status":"ok"}')
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(ready.statusCode).toBe(200)
    expect(ready.body).toBe('{"status":"ready"}')
    expect(ready.headers['cache-control']).toBeUndefined()
  })

  it('turns not ready while draining, and when the database does not answer', async () => {
    const lifecycle = { draining: false }
    const d = await makeApp(kind, { lifecycle })
    lifecycle.draining = true
    const draining = await d.app.inject({ method: 'GET', url: '/readyz' })
    expect(draining.statusCode).toBe(503)
    expect(errorOf(draining).error).toBe(errors.UNAVAILABLE.code)
    expect(draining.headers['retry-after']).toBe('1')
    lifecycle.draining = false
    d.store.ping = async () => {
      throw new Error('database is gone')
    }
    expect((await d.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
    await d.close()
  })

  it('closes each connection after its answer while draining', async () => {
    const lifecycle = { draining: false }
    const d = await makeApp(kind, { lifecycle })
    try {
      const port = await listenLocally(d.app)
      const token = await d.token()
      const exchange = async (request: string) => {
        const socket = await openSocket(port)
        socket.write(request)
        const started = Date.now()
        const answer = await readUntilClose(socket, 1000)
        return {
          connection: /\r\nconnection: ([^\r]*)/i.exec(answer)?.[1],
          closed: Date.now() - started < 900,
        }
      }
      const requests = [
        'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n',
        `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 23\r\n\r\n{"id": 31, "name": "a"}`,
        `GET /plants/31 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`,
      ]
      for (const request of requests) {
        expect(await exchange(request)).toEqual({ connection: 'keep-alive', closed: false })
      }
      lifecycle.draining = true
      for (const request of requests) {
        expect(await exchange(request)).toEqual({ connection: 'close', closed: true })
      }
    } finally {
      await d.close()
    }
  })
})
