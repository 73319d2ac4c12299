import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { ConfigError, resolveServeConfig } from '../../src/config.js'
import { errors } from '../../src/errors.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { openStore, openStoreRetrying } from '../../src/store/open.js'
import type { SqliteStore } from '../../src/store/sqlite/index.js'
import { TokenService } from '../../src/tokens/service.js'
import { errorOf, makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('an unreachable database on $name', (kind) => {
  let t: TestApp
  let token: string
  beforeAll(async () => {
    t = await makeApp(kind)
    token = await t.token()
  })
  afterAll(() => t.close())

  it('answers 503 with the Error shape and Retry-After, for reads, writes and /readyz', async () => {
    const down = () => Promise.reject(new StoreUnavailableError('database unreachable: connect ECONNREFUSED'))
    const { plants } = t.store
    const methods = ['create', 'get', 'read', 'list', 'update', 'remove'] as const
    for (const name of methods) Object.assign(plants, { [name]: down })
    Object.assign(t.store, { ping: down })
    try {
      const created = await postPlant(t.app, token, '{"id": 1, "name": "a"}')
      expect(created.statusCode).toBe(503)
      expect(created.headers['retry-after']).toBe('1')
      expect(errorOf(created).error).toBe(errors.UNAVAILABLE.code)
      const read = await t.app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${token}` } })
      expect(read.statusCode).toBe(503)
      expect(errorOf(read).message).not.toContain('ECONNREFUSED')
      const ready = await t.app.inject({ url: '/readyz' })
      expect(ready.statusCode).toBe(503)
      expect(ready.headers['retry-after']).toBe('1')
      expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200)
      const listed = await t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } })
      expect(listed.statusCode).toBe(503)
    } finally {
      // The stubs are own properties over the prototype's methods: deleting them restores the store.
      for (const name of methods) delete (plants as unknown as Record<string, unknown>)[name]
      delete (t.store as unknown as Record<string, unknown>).ping
    }
    expect((await postPlant(t.app, token, '{"id": 1, "name": "a"}')).statusCode).toBe(200)
  })
})

describe('a SQLite database that cannot grow (a full disk)', () => {
  it('answers 503 with the Error shape and Retry-After, keeps what it acknowledged, and recovers', async () => {
    // `:memory:` commits creates on the connection the test can reach; max_page_count makes SQLite
    // answer exactly as it does on a full disk (SQLITE_FULL, "database or disk is full").
    const store = (await openStore({ kind: 'sqlite', path: ':memory:' })) as SqliteStore
    const tokens = new TokenService(store.tokens)
    const app = await buildApp({ store, tokens })
    try {
      const token = (await tokens.create('full', ['plants:read', 'plants:write'])).token
      store.db.pragma(`max_page_count = ${store.db.pragma('page_count', { simple: true })}`)
      const acknowledged: number[] = []
      let refused: Awaited<ReturnType<typeof postPlant>> | undefined
      for (let id = 1; id <= 5000 && !refused; id++) {
        const res = await postPlant(app, token, JSON.stringify({ id, name: 'n'.repeat(200) }))
        if (res.statusCode === 200) acknowledged.push(id)
        else refused = res
      }
      expect(refused?.statusCode).toBe(503)
      expect(refused?.headers['retry-after']).toBe('1')
      expect(errorOf(refused as NonNullable<typeof refused>).error).toBe(errors.UNAVAILABLE.code)
      const auth = { authorization: `Bearer ${token}` }
      const replaced = await app.inject({
        method: 'PUT',
        url: '/plants/1',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'm'.repeat(200), tag: 't'.repeat(100) }),
      })
      if (replaced.statusCode !== 200) {
        expect(replaced.statusCode).toBe(503)
        expect(errorOf(replaced).error).toBe(errors.UNAVAILABLE.code)
      }
      for (const id of acknowledged) {
        expect((await app.inject({ url: `/plants/${id}`, headers: auth })).statusCode).toBe(200)
      }
      store.db.pragma('max_page_count = 1073741823')
      expect((await postPlant(app, token, '{"id": 9999, "name": "room again"}')).statusCode).toBe(200)
    } finally {
      await app.close()
      await store.close()
    }
  })
})

describe('opening a database at start', () => {
  it('retries an unreachable PostgreSQL until the timeout, then fails with one clear message', async () => {
    const attempts: number[] = []
    const opening = openStoreRetrying(
      { kind: 'postgres', url: 'postgres://nobody:x@127.0.0.1:1/none' },
      { timeoutMs: 500 },
      { timeoutMs: 600, onRetry: (_error, attempt) => attempts.push(attempt) },
    )
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(opening).rejects.toThrow(/^database unreachable: .*ECONNREFUSED.*gave up after 1s/)
    expect(attempts.length).toBeGreaterThan(0)
  })

  it('does not retry an error that waiting cannot fix', async () => {
    const attempts: number[] = []
    await expect(
      openStoreRetrying(
        { kind: 'sqlite', path: '/dev/null/not-a-folder/p.db' },
        {},
        { timeoutMs: 10_000, onRetry: (_error, attempt) => attempts.push(attempt) },
      ),
    ).rejects.toThrow()
    expect(attempts).toEqual([])
  })
})

describe('database settings', () => {
  it('defaults to a pool of 10, a 5 s database timeout and a 30 s start-up timeout', () => {
    const config = resolveServeConfig({}, {})
    expect(config.databasePoolSize).toBe(10)
    expect(config.databaseTimeoutMs).toBe(5000)
    expect(config.databaseStartupTimeoutMs).toBe(30_000)
    expect(config.drainDelayMs).toBe(0)
  })

  it.each([
    [{ databasePoolSize: '0' }, /--database-pool-size \(DATABASE_POOL_SIZE\)/],
    [{ databasePoolSize: 'ten' }, /--database-pool-size/],
    [{ databaseTimeout: '0s' }, /--database-timeout \(DATABASE_TIMEOUT\)/],
    [{ databaseStartupTimeout: 'soon' }, /--database-startup-timeout/],
    [{ drainDelay: '-1s' }, /--drain-delay/],
  ])('refuses %o', (flags, message) => {
    expect(() => resolveServeConfig(flags, {})).toThrow(ConfigError)
    expect(() => resolveServeConfig(flags, {})).toThrow(message)
  })

  it('reads them from the environment', () => {
    const config = resolveServeConfig({}, { DATABASE_POOL_SIZE: '3', DATABASE_TIMEOUT: '750ms' })
    expect(config.databasePoolSize).toBe(3)
    expect(config.databaseTimeoutMs).toBe(750)
  })
})
