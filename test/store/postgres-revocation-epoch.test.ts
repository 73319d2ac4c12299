import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import pg, { type PoolClient } from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../../src/app.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { openPostgres, type PostgresStore } from '../../src/store/postgres/index.js'
import { REVOCATION_BOUND_MS, RevocationWatch } from '../../src/store/postgres/revocation.js'
import { TokenService } from '../../src/tokens/service.js'
import { admin } from '../helpers/postgres.js'
import { postgresKind } from '../helpers/stores.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

const POOL_SIZE = 2

describe.skipIf(!postgresKind)('the token revocation epoch on PostgreSQL', () => {
  const cleanup: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
  })

  async function setUp() {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const store: PostgresStore = await openPostgres({ url, poolSize: POOL_SIZE, timeoutMs: 1000 })
    cleanup.push(() => store.close())
    const tokens = new TokenService(store.tokens)
    const app: FastifyInstance = await buildApp({ store, tokens })
    await app.ready()
    cleanup.push(() => app.close())
    const scrape = async (token: string) => {
      const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })
      return res.statusCode
    }
    /** Takes every pooled connection, as slow queries do, until the returned function gives them back. */
    const saturate = async () => {
      const held: PoolClient[] = await Promise.all(
        Array.from({ length: POOL_SIZE }, () => store.pool.connect()),
      )
      let released = false
      const release = async () => {
        if (released) return
        released = true
        for (const client of held) client.release()
      }
      cleanup.push(release)
      return release
    }
    return { url, store, tokens, scrape, saturate }
  }

  /** A migrated database with a proxy in front of it, for a RevocationWatch whose links the test cuts. */
  async function behindProxy() {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const store = await openPostgres({ url, watchRevocations: false })
    cleanup.push(() => store.close())
    const proxy = await TcpProxy.start(url)
    cleanup.push(() => proxy.close())
    return { url, store, proxy }
  }

  it('stays confirmed while every pooled connection is taken past the bound, and still shows a revocation made without a notification', async () => {
    const { url, store, tokens, scrape, saturate } = await setUp()
    const kept = (await tokens.create('kept', ['metrics:read'])).token
    const revoked = await tokens.create('revoked', ['metrics:read'])
    expect(await scrape(kept)).toBe(200)
    expect(await scrape(revoked.token)).toBe(200)

    const release = await saturate()
    // Queued behind the held connections, a pooled query gives up after the timeout (1 s).
    await expect(store.pool.query('SELECT 1')).rejects.toThrow()
    const statuses: number[] = []
    const until = performance.now() + REVOCATION_BOUND_MS + 2000
    while (performance.now() < until) {
      statuses.push(await scrape(kept))
      await sleep(250)
    }
    expect(new Set(statuses)).toEqual(new Set([200]))

    // Another process revokes without a NOTIFY, as when the notification is lost: only a re-read of
    // the epoch, which the pool cannot serve now, can tell this process.
    const before = store.tokens.revocationEpoch()
    await admin(url, async (c) => {
      await c.query('BEGIN')
      await c.query('UPDATE tokens SET revoked_at = now() WHERE id = $1', [revoked.record.id])
      await c.query("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'")
      await c.query('COMMIT')
    })
    const revokedAt = performance.now()
    await vi.waitFor(() => expect(store.tokens.revocationEpoch()).toBeGreaterThan(before), {
      timeout: REVOCATION_BOUND_MS,
      interval: 50,
    })
    expect(performance.now() - revokedAt).toBeLessThan(REVOCATION_BOUND_MS)
    // The cache is gone; reading the token again needs the pool, so the answer is a 503, never a 200.
    expect(await scrape(revoked.token)).toBe(503)

    await release()
    expect(await scrape(revoked.token)).toBe(401)
    expect(await scrape(kept)).toBe(200)
  }, 30_000)

  it('stays confirmed through the pool while the listening connection is deaf', async () => {
    // Only the listening connection crosses the proxy: its link stalls, the pool's does not.
    const { url, store, proxy } = await behindProxy()
    const watch = new RevocationWatch({
      client: { connectionString: proxy.route(url), connectionTimeoutMillis: 1000, query_timeout: 1000 },
      pool: store.pool,
      pollIntervalMs: 200,
    })
    await watch.start()
    cleanup.push(() => watch.close())
    proxy.stall()
    const before = watch.epoch
    await admin(url, (c) => c.query("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'"))
    await vi.waitFor(() => expect(watch.epoch).toBe(before + 1), { timeout: 3000, interval: 50 })
    const until = performance.now() + REVOCATION_BOUND_MS + 1500
    while (performance.now() < until) {
      expect(watch.epoch).toBe(before + 1)
      await sleep(250)
    }
    await expect(watch.check()).rejects.toThrow()
  }, 30_000)

  it('ends a listening connection that finished opening after the watch was closed, and starts no poll', async () => {
    const { url, store } = await behindProxy()
    const application = 'plantstore_closed_while_opening'
    const watch = new RevocationWatch({
      client: { connectionString: url, application_name: application },
      pool: store.pool,
      pollIntervalMs: 100,
    })
    const starting = watch.start()
    await watch.close()
    await starting
    expect(watch.started).toBe(false)
    await vi.waitFor(
      async () => {
        const sessions = await admin(url, (c) =>
          c.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [application]),
        )
        expect(sessions.rows).toEqual([])
      },
      { timeout: 5000, interval: 50 },
    )
  })

  it('gives no epoch once no re-read has answered for the bound, either way, and gives it again once one does', async () => {
    // Both ways to the database cross the proxy: the listening connection and the pool.
    const { url, proxy } = await behindProxy()
    const client = { connectionString: proxy.route(url), connectionTimeoutMillis: 300, query_timeout: 300 }
    const pool = new pg.Pool(client)
    pool.on('error', () => {})
    pool.on('connect', (c) => c.on('error', () => {}))
    cleanup.push(() => pool.end())
    const watch = new RevocationWatch({ client, pool, pollIntervalMs: 100, boundMs: 800 })
    await watch.start()
    cleanup.push(() => watch.close())
    expect(watch.epoch).toBe(0)
    await proxy.down()
    const downAt = performance.now()
    await vi.waitFor(() => expect(() => watch.epoch).toThrow(StoreUnavailableError), {
      timeout: 5000,
      interval: 25,
    })
    // Not before the bound: a re-read that failed once is no reason to refuse every token.
    expect(performance.now() - downAt).toBeGreaterThanOrEqual(700)
    await proxy.up()
    await admin(url, (c) => c.query("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'"))
    await vi.waitFor(() => expect(watch.epoch).toBe(1), { timeout: 5000, interval: 50 })
  }, 30_000)
})
