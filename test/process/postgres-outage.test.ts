import { setTimeout as sleep } from 'node:timers/promises'
import type pg from 'pg'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { admin, TEST_DATABASE_URL, whileLocked } from '../helpers/postgres.js'
import { issueToken, type RunningServer, runCli, startServer } from '../helpers/process.js'
import { startReceiver } from '../helpers/receiver.js'
import { postgresKind } from '../helpers/stores.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

// The service is told to give up on the database after 2 s; no answer may take much longer.
const DATABASE_TIMEOUT = '2s'
const NO_HANG_MS = 8000

interface Outcome {
  id: number
  status: number | 'hung' | 'failed'
  retryAfter: string | null
  error?: number
}

async function create(server: RunningServer, token: string, id: number): Promise<Outcome> {
  try {
    const res = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: `plant ${id}` }),
      signal: AbortSignal.timeout(NO_HANG_MS),
    })
    const body = (await res.json()) as { error?: number }
    return { id, status: res.status, retryAfter: res.headers.get('retry-after'), error: body.error }
  } catch (error) {
    return { id, status: (error as Error).name === 'TimeoutError' ? 'hung' : 'failed', retryAfter: null }
  }
}

const statusOf = async (server: RunningServer, path: string) =>
  (await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(NO_HANG_MS) })).status

describe.skipIf(!postgresKind)('a PostgreSQL outage', () => {
  const cleanup: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step()
  })

  async function setUp() {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const token = await issueToken(url, 'outage')
    const proxy = await TcpProxy.start(url)
    cleanup.push(() => proxy.close())
    /** A server reaching the database through the proxy, stopped after the test. */
    const serve = async (...extra: string[]) => {
      const server = await startServer([
        '--database-url',
        proxy.route(url),
        '--database-timeout',
        DATABASE_TIMEOUT,
        ...extra,
      ])
      cleanup.push(() => server.stop())
      return server
    }
    return { url, token, proxy, serve }
  }

  it('costs 503s with Retry-After while it lasts, never a hang or an acknowledged write', async () => {
    const { url, token, proxy, serve } = await setUp()
    // Eight writers as fast as they can go: only the outage may refuse them, not the rate limit.
    const server = await serve('--rate-limit', 'off', '--max-event-loop-delay', 'off')

    const outcomes: Outcome[] = []
    let next = 1
    let running = true
    const workers = Array.from({ length: 8 }, async () => {
      while (running) outcomes.push(await create(server, token, next++))
    })

    await vi.waitFor(() => expect(outcomes.filter((o) => o.status === 200).length).toBeGreaterThan(20), {
      timeout: 10_000,
    })
    await proxy.down()
    const cutAt = outcomes.length
    await vi.waitFor(
      () => expect(outcomes.slice(cutAt).filter((o) => o.status === 503).length).toBeGreaterThan(5),
      {
        timeout: 10_000,
      },
    )
    expect(await statusOf(server, '/readyz')).toBe(503)
    expect(await statusOf(server, '/healthz')).toBe(200)

    await proxy.up()
    // The service recovers by itself: no restart.
    await vi.waitFor(async () => expect(await statusOf(server, '/readyz')).toBe(200), { timeout: 10_000 })
    const backAt = outcomes.length
    await vi.waitFor(
      () => expect(outcomes.slice(backAt).filter((o) => o.status === 200).length).toBeGreaterThan(20),
      {
        timeout: 10_000,
      },
    )
    running = false
    await Promise.all(workers)

    const statuses = new Set(outcomes.map((o) => o.status))
    expect([...statuses].sort()).toEqual([200, 503])
    for (const o of outcomes.filter((o) => o.status === 503)) {
      expect(o.error).toBe(50301)
      expect(o.retryAfter).toMatch(/^\d+$/)
    }
    // Every acknowledged create is in the database.
    const acknowledged = outcomes.filter((o) => o.status === 200).map((o) => String(o.id))
    const stored = await admin(url, (c) =>
      c.query<{ id: string }>('SELECT id::text AS id FROM plants WHERE id = ANY($1::bigint[])', [
        acknowledged,
      ]),
    )
    expect(stored.rows.map((r) => r.id).sort()).toEqual([...acknowledged].sort())
  })

  it('answers 503 within the database timeout when the database stops answering without closing', async () => {
    const { token, proxy, serve } = await setUp()
    const server = await serve()
    expect((await create(server, token, 1)).status).toBe(200)
    proxy.stall()
    const stalledAt = Date.now()
    const during = await Promise.all([
      create(server, token, 2),
      create(server, token, 3),
      create(server, token, 1),
    ])
    expect(during.map((o) => o.status)).toEqual([503, 503, 503])
    // One --database-timeout (2 s), not one for the statement and another for its ROLLBACK.
    expect(Date.now() - stalledAt).toBeLessThan(3500)
    expect(during.every((o) => o.error === 50301 && o.retryAfter !== null)).toBe(true)
    expect(await statusOf(server, '/readyz')).toBe(503)
    await proxy.resume()
    await vi.waitFor(async () => expect(await statusOf(server, '/readyz')).toBe(200), { timeout: 10_000 })
    const after = await create(server, token, 4)
    expect(after.status).toBe(200)
  })

  it('stays ready while slow queries hold every pooled connection, and turns 503 within the timeout once the database stops answering', async () => {
    const { url, token, proxy, serve } = await setUp()
    const server = await serve('--database-pool-size', '1', '--rate-limit', 'off')
    const read = (id: number) =>
      fetch(`${server.url}/plants/${id}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(NO_HANG_MS),
      }).then((res) => res.status)
    expect(await read(1)).toBe(404)
    // Another session locks the table: each read then holds the one pooled connection for the
    // whole --database-timeout, and those queued behind it give up in the pool's queue.
    await whileLocked(url, 'plants', async () => {
      let running = true
      const reads: number[] = []
      const readers = Array.from({ length: 16 }, async () => {
        while (running) reads.push(await read(1))
      })
      await sleep(500)
      const probes: number[] = []
      for (let i = 0; i < 3; i++) {
        probes.push(await statusOf(server, '/readyz'))
        await sleep(1000)
      }
      running = false
      await Promise.all(readers)
      expect(reads).toContain(503)
      expect(probes).toEqual([200, 200, 200])
    })

    proxy.stall()
    const stalledAt = Date.now()
    expect(await statusOf(server, '/readyz')).toBe(503)
    expect(Date.now() - stalledAt).toBeLessThan(3500)
    await proxy.resume()
    await vi.waitFor(async () => expect(await statusOf(server, '/readyz')).toBe(200), { timeout: 10_000 })
  })

  it('stops cleanly after a stall that left its connections dead', async () => {
    const { token, proxy, serve } = await setUp()
    const server = await serve('--shutdown-timeout', '8s')
    expect((await create(server, token, 1)).status).toBe(200)
    proxy.stall()
    expect(await statusOf(server, '/readyz')).toBe(503)
    proxy.heal()
    await vi.waitFor(async () => expect(await statusOf(server, '/readyz')).toBe(200), { timeout: 10_000 })
    // A pooled connection the stall left dead fails the request that meets it (503 within the database
    // timeout) and leaves the pool; the service serves creates again once the client retries.
    await vi.waitFor(async () => expect((await create(server, token, 2)).status).toBe(200), {
      timeout: 10_000,
    })
    // The connections open during the stall never answer a goodbye: closing them may not wait for one.
    const stoppedAt = Date.now()
    expect(await server.stop()).toBe(0)
    expect(Date.now() - stoppedAt).toBeLessThan(5000)
  })

  it('stops within its database timeouts while the link is still stalled, exit 0', async () => {
    const { token, proxy, serve } = await setUp()
    const server = await serve('--shutdown-timeout', '20s')
    // Pooled connections open when the link stalls: their goodbye never comes.
    const creates = await Promise.all([1, 2, 3, 4].map((id) => create(server, token, id)))
    expect(creates.map((c) => c.status)).toEqual([200, 200, 200, 200])
    proxy.stall()
    // Requests under way when the stop begins, waiting on the stalled link.
    const pending = [5, 6, 7, 8].map((id) => create(server, token, id))
    await sleep(300)
    const stoppedAt = Date.now()
    expect(await server.stop()).toBe(0)
    // Each is answered, 503 within the database timeout, before the process ends.
    expect((await Promise.all(pending)).map((c) => c.status)).toEqual([503, 503, 503, 503])
    // Every wait on the database is bounded by --database-timeout (2 s): the stop is not held until
    // --shutdown-timeout (which would exit 1).
    expect(Date.now() - stoppedAt).toBeLessThan(9000)
  })

  it('keeps delivering webhooks after an outage, with one line for the passes it failed', async () => {
    const { url, proxy, serve } = await setUp()
    const token = await issueToken(url, 'hooks', 'plants:write,webhooks:manage')
    const receiver = await startReceiver()
    cleanup.push(() => receiver.close())
    const server = await serve('--webhook-allow-private-urls')
    const subscribed = await fetch(`${server.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    })
    expect(subscribed.status).toBe(201)
    expect((await create(server, token, 1)).status).toBe(200)
    await receiver.waitFor(1)

    await proxy.down()
    // The dispatcher polls every 100 ms and keeps its lease for 15 s: every pass of these seconds fails.
    const passFailed = () => server.output().match(/"msg":"webhook dispatch pass failed"/g)?.length ?? 0
    await vi.waitFor(() => expect(passFailed()).toBeGreaterThan(0), { timeout: 5000 })
    await sleep(2000)
    await proxy.up()
    await vi.waitFor(async () => expect((await create(server, token, 2)).status).toBe(200), {
      timeout: 10_000,
    })
    const [, second] = await receiver.waitFor(2)
    expect(JSON.parse(second?.body ?? '{}')).toMatchObject({ data: { id: 2 } })
    expect(passFailed()).toBe(1)
  })

  it('answers 503, not 500, while the database takes no writes (a failover to a standby)', async () => {
    const { url, token, serve } = await setUp()
    const server = await serve()
    expect((await create(server, token, 1)).status).toBe(200)
    const database = new URL(url).pathname.slice(1)
    // What a failover does to the service: its sessions end, and the server it reconnects to is read-only.
    const reconnectAll = (c: pg.Client) =>
      c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database])
    await admin(TEST_DATABASE_URL as string, async (c) => {
      await c.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`)
      await reconnectAll(c)
    })
    const during: Outcome[] = []
    for (let id = 2; id < 8; id++) during.push(await create(server, token, id))
    for (const o of during) expect(o).toMatchObject({ status: 503, error: 50301, retryAfter: '1' })
    await admin(TEST_DATABASE_URL as string, async (c) => {
      await c.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`)
      await reconnectAll(c)
    })
    await vi.waitFor(async () => expect((await create(server, token, 8)).status).toBe(200), {
      timeout: 10_000,
    })
  })

  it('keeps /metrics answering, without the webhook queue gauges it cannot read', async () => {
    const { url, token, proxy, serve } = await setUp()
    const reader = await issueToken(url, 'prometheus', 'metrics:read')
    const server = await serve()
    const scrape = async () => {
      const res = await fetch(`${server.url}/metrics`, {
        headers: { authorization: `Bearer ${reader}` },
        signal: AbortSignal.timeout(NO_HANG_MS),
      })
      return { status: res.status, body: await res.text() }
    }
    expect((await create(server, token, 1)).status).toBe(200)
    expect((await scrape()).body).toMatch(/^plantstore_webhook_deliveries\{status="pending"\} 0$/m)
    await proxy.down()
    expect((await create(server, token, 2)).status).toBe(503)
    const during = await scrape()
    expect(during.status).toBe(200)
    // The outage shows in what the process counted itself; the queue's depth is simply not known.
    expect(during.body).toMatch(
      /^plantstore_http_requests_total\{method="POST",route="\/plants",status="503"\} 1$/m,
    )
    expect(during.body).not.toMatch(/^plantstore_webhook_deliveries\{/m)
    expect(during.body).not.toMatch(/^plantstore_webhook_events_awaiting_fan_out /m)
    await proxy.up()
    await vi.waitFor(
      async () =>
        expect((await scrape()).body).toMatch(/^plantstore_webhook_deliveries\{status="pending"\} 0$/m),
      { timeout: 10_000 },
    )
  })

  it('refuses a token revoked while the database cannot be reached, 5 s after at most', async () => {
    const { url, proxy, serve } = await setUp()
    const reader = await issueToken(url, 'prometheus', 'metrics:read')
    const server = await serve()
    // /metrics needs no database: a token this process verified before is all it asks.
    const scrape = async () => {
      const res = await fetch(`${server.url}/metrics`, {
        headers: { authorization: `Bearer ${reader}` },
        signal: AbortSignal.timeout(NO_HANG_MS),
      })
      const body = await res.text()
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body }
    }
    expect((await scrape()).status).toBe(200)
    // Revoked behind the server's back: neither the notification nor a poll can reach it.
    proxy.stall()
    expect((await runCli(['token', 'revoke', reader, '--database-url', url])).code).toBe(0)
    const revokedAt = performance.now()
    await sleep(Math.max(0, revokedAt + 5000 - performance.now()))
    const late = await scrape()
    expect(late).toMatchObject({ status: 503, retryAfter: '1' })
    expect(JSON.parse(late.body)).toMatchObject({ error: 50301 })
    await proxy.resume()
    await vi.waitFor(async () => expect((await scrape()).status).toBe(401), { timeout: 10_000 })
  })

  it.each([
    ['one process', []],
    ['--workers 2', ['--workers', '2']],
  ])('retries an unreachable database at start, then serves once it is back (%s)', async (_, extra) => {
    const { url, token, proxy } = await setUp()
    await proxy.down()
    const starting = startServer([
      '--database-url',
      proxy.route(url),
      '--database-startup-timeout',
      '20s',
      ...extra,
    ])
    await sleep(1500)
    await proxy.up()
    const server = await starting
    cleanup.push(() => server.stop())
    expect(await statusOf(server, '/readyz')).toBe(200)
    expect((await create(server, token, 7)).status).toBe(200)
  })

  it('gives up at start after --database-startup-timeout with exit 1 and one line', async () => {
    const { url, proxy } = await setUp()
    await proxy.down()
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--database-url',
      proxy.route(url),
      '--database-startup-timeout',
      '1s',
      '--log-level',
      'silent',
    ])
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^plantstore: database unreachable: .*gave up after 1s/)
    expect(lines[0]).not.toContain('plantstore@')
  })

  it('retries at start a database that accepts connections but never answers, as one that refuses them', async () => {
    const { url, proxy } = await setUp()
    proxy.stall()
    const startedAt = Date.now()
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--database-url',
      proxy.route(url),
      '--database-timeout',
      '500ms',
      '--database-startup-timeout',
      '2s',
      '--log-level',
      'silent',
    ])
    expect(result.code).toBe(1)
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2000)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^plantstore: database unreachable: .*gave up after 2s/)
  })
})
