import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../src/errors.js'
import { errorOf, makeApp, type TestApp } from './helpers/app.js'
import { storeKinds } from './helpers/stores.js'

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
})
