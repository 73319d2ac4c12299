import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../../src/app.js'
import { errors } from '../../src/errors.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import { REVOCATION_BOUND_MS } from '../../src/store/postgres/revocation.js'
import type { Store } from '../../src/store/types.js'
import { TokenService } from '../../src/tokens/service.js'
import { errorOf } from '../helpers/app.js'
import { postgresKind } from '../helpers/stores.js'

// Two instances on one PostgreSQL database, each with its own store (pool and listening connection)
// and its own cache of verified tokens, as two serve processes have.

describe.skipIf(!postgresKind)('a roll or a revocation over HTTP, seen by another instance', () => {
  const instances: Array<{ app: FastifyInstance; store: Store }> = []
  let admin: string
  beforeAll(async () => {
    const location = parseDatabaseUrl(await (postgresKind as NonNullable<typeof postgresKind>).freshUrl())
    if (!location) throw new Error('bad test database url')
    for (let i = 0; i < 2; i++) {
      const store = await openStore(location)
      const app = await buildApp({ store, tokens: new TokenService(store.tokens) })
      await app.ready()
      instances.push({ app, store })
    }
    admin = (
      await new TokenService(instances[0]?.store.tokens as Store['tokens']).create('admin', [
        'tokens:manage',
        'plants:read',
      ])
    ).token
  })
  afterAll(async () => {
    for (const { app, store } of instances) {
      await app.close()
      await store.close()
    }
  })

  const instance = (i: number) => () => (instances[i] as { app: FastifyInstance }).app
  const first = instance(0)
  const second = instance(1)
  const listPlants = (app: FastifyInstance, token: string) =>
    app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } })
  const manage = (method: 'POST' | 'DELETE', url: string, payload?: object) =>
    first().inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${admin}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload }),
    })
  /** Waits until `app` answers `token` with the 401 `entry`, at most the documented bound. */
  const refusedWithin = (app: FastifyInstance, token: string, entry: typeof errors.TOKEN_UNKNOWN) =>
    vi.waitFor(
      async () => {
        const res = await listPlants(app, token)
        expect([res.statusCode, errorOf(res).error]).toEqual([401, entry.code])
      },
      { timeout: REVOCATION_BOUND_MS, interval: 50 },
    )

  it('refuses the old secret on both within 5 seconds of a roll with no overlap, and takes the new one', async () => {
    const created = await manage('POST', '/tokens', { name: 'app', scopes: ['plants:read'] })
    const { id, secret: old } = created.json() as { id: string; secret: string }
    // Each instance has verified, and so remembers, the secret before it is rolled.
    for (const app of [first(), second()]) expect((await listPlants(app, old)).statusCode).toBe(200)
    const rolled = await manage('POST', `/tokens/${id}/roll`, { overlap: '0s' })
    expect(rolled.statusCode).toBe(200)
    const fresh = (rolled.json() as { secret: string }).secret
    // The instance that rolled sees it at once; the other by the notification, within the bound.
    const once = await listPlants(first(), old)
    expect([once.statusCode, errorOf(once).error]).toEqual([401, errors.TOKEN_UNKNOWN.code])
    await refusedWithin(second(), old, errors.TOKEN_UNKNOWN)
    for (const app of [first(), second()]) expect((await listPlants(app, fresh)).statusCode).toBe(200)
  })

  it('refuses every secret of a token revoked over HTTP on both within 5 seconds', async () => {
    const created = await manage('POST', '/tokens', { name: 'doomed', scopes: ['plants:read'] })
    const { id, secret: old } = created.json() as { id: string; secret: string }
    const fresh = (
      (await manage('POST', `/tokens/${id}/roll`, { overlap: '1h' })).json() as { secret: string }
    ).secret
    for (const app of [first(), second()]) {
      for (const secret of [old, fresh]) expect((await listPlants(app, secret)).statusCode).toBe(200)
    }
    expect((await manage('DELETE', `/tokens/${id}`)).statusCode).toBe(204)
    for (const secret of [old, fresh]) {
      const once = await listPlants(first(), secret)
      expect([once.statusCode, errorOf(once).error]).toEqual([401, errors.TOKEN_REVOKED.code])
      await refusedWithin(second(), secret, errors.TOKEN_REVOKED)
    }
    // Other tokens are unaffected.
    expect((await listPlants(second(), admin)).statusCode).toBe(200)
  })
})
