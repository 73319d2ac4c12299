import { Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { createLogger } from '../src/log.js'
import { TokenService } from '../src/tokens/service.js'
import { openFresh, storeKinds } from './helpers/stores.js'

describe.each(storeKinds)('health routes on $name', (kind) => {
  const closers: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const close of closers.splice(0)) await close()
  })

  async function app(draining = false) {
    const { store } = await openFresh(kind)
    const lifecycle = { draining }
    const instance = await buildApp({ store, tokens: new TokenService(store.tokens), lifecycle })
    closers.push(
      () => instance.close(),
      () => store.close(),
    )
    return { instance, store, lifecycle }
  }

  it('answers /healthz and /readyz without a token', async () => {
    const { instance } = await app()
    expect((await instance.inject('/healthz')).json()).toEqual({ status: 'ok' })
    const ready = await instance.inject('/readyz')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'ready' })
  })

  it('turns /readyz to 503 with Retry-After once shutdown begins', async () => {
    const { instance, lifecycle } = await app()
    lifecycle.draining = true
    const res = await instance.inject('/readyz')
    expect(res.statusCode).toBe(503)
    expect(res.headers['retry-after']).toBe('1')
    expect(res.json().error).toBe(50301)
  })

  it('turns /readyz to 503 when the database does not answer', async () => {
    const { instance, store } = await app()
    await store.close()
    const res = await instance.inject('/readyz')
    expect(res.statusCode).toBe(503)
    expect(res.json()).toEqual({ error: 50301, message: 'The database is unreachable.' })
  })
})

describe('the logger', () => {
  it('never writes a token or an Authorization header', () => {
    let text = ''
    const sink = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk)
        done()
      },
    })
    const logger = createLogger('info', sink)
    logger.info({ req: { headers: { authorization: 'Bearer pst_secret' } }, token: 'pst_secret' }, 'x')
    expect(text).toContain('[redacted]')
    expect(text).not.toContain('pst_secret')
  })
})
