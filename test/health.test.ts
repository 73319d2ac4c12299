import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeApp, type TestApp } from './helpers/app.js'
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
})
