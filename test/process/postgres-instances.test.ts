import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { admin } from '../helpers/postgres.js'
import { issueToken, type RunningServer, runCli, startServer } from '../helpers/process.js'
import { postgresKind } from '../helpers/stores.js'

const post = (server: RunningServer, token: string, body: string) =>
  fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(20_000),
  })

const getPlant = (server: RunningServer, token: string, id: string) =>
  fetch(`${server.url}/plants/${id}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(20_000),
  })

/** A subscription to plant.created, stored directly in the database for the serve process to find. */
async function subscribeInSql(url: string, id: string): Promise<void> {
  await admin(url, (c) =>
    c.query(
      `INSERT INTO webhooks (id, url, events, secret, after_seq, created_at, updated_at)
       VALUES ($1, 'https://receiver.example/hook', '{plant.created}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
         0, now(), now())`,
      [id],
    ),
  )
}

function newToken(url: string): Promise<string> {
  return issueToken(url, 'instances')
}

describe.skipIf(!postgresKind)('several serve processes on one PostgreSQL database', () => {
  let url: string
  let servers: RunningServer[] = []
  let token: string

  beforeAll(async () => {
    url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    // Five instances start at once on an empty database: the migration runs once, none fails.
    servers = await Promise.all(
      Array.from({ length: 5 }, () => startServer(['--database-url', url, '--database-pool-size', '4'])),
    )
    token = await newToken(url)
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
  })

  it('ends with one schema when instances and migrate commands start together', async () => {
    const migrations = await Promise.all(
      Array.from({ length: 3 }, () => runCli(['migrate', '--database-url', url])),
    )
    expect(migrations.map((m) => m.code)).toEqual([0, 0, 0])
    const versions = await admin(url, (c) =>
      c.query<{ version: number }>('SELECT version FROM schema_migrations'),
    )
    const list = versions.rows.map((r) => r.version)
    expect(list.length).toBeGreaterThan(0)
    expect(new Set(list).size).toBe(list.length)
  })

  it('answers exactly one 200 and 99 409s to 100 concurrent creates of one id over the instances', async () => {
    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        post(
          servers[i % servers.length] as RunningServer,
          token,
          `{"id": 9223372036854775807, "name": "n${i}"}`,
        ),
      ),
    )
    const statuses = responses.map((r) => r.status)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(99)
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ error?: number }>))
    expect(bodies.filter((b) => b.error === 40901)).toHaveLength(99)
    // Every instance reads the one stored plant.
    for (const server of servers) {
      const read = await getPlant(server, token, '9223372036854775807')
      expect(read.status).toBe(200)
    }
  })

  it('refuses a token revoked on the command line on every instance within 5 seconds', async () => {
    const victim = await newToken(url)
    // Each instance has verified (and cached) the token before it is revoked.
    for (const server of servers) expect((await getPlant(server, victim, '1')).status).toBe(404)
    const publicId = victim.split('_')[1] as string
    const revoked = await runCli(['token', 'revoke', publicId, '--database-url', url])
    expect(revoked.code).toBe(0)
    await Promise.all(
      servers.map((server) =>
        vi.waitFor(
          async () => {
            const res = await getPlant(server, victim, '1')
            expect(res.status).toBe(401)
            expect(((await res.json()) as { error: number }).error).toBe(40105)
          },
          { timeout: 5000, interval: 50 },
        ),
      ),
    )
    // Other tokens are unaffected.
    expect((await getPlant(servers[0] as RunningServer, token, '1')).status).toBe(404)
  })

  it('holds an Idempotency-Key across instances: one create, every retry the same answer', async () => {
    const body = '{"id": 4242, "name": "once"}'
    const send = (server: RunningServer, payload = body) =>
      fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': 'across-instances',
        },
        body: payload,
        signal: AbortSignal.timeout(20_000),
      })
    const responses = await Promise.all(servers.flatMap((server) => [send(server), send(server)]))
    const answers = await Promise.all(
      responses.map(async (r) => ({
        status: r.status,
        body: await r.text(),
        replayed: r.headers.get('idempotent-replayed'),
      })),
    )
    // Each is the first answer, a replay of it, or "still in progress" while the first is running.
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.body).toBe('{"id":4242,"name":"once"}')
      else expect([answer.status, JSON.parse(answer.body).error]).toEqual([409, 40902])
    }
    expect(answers.filter((a) => a.status === 200 && a.replayed !== 'true')).toHaveLength(1)
    for (const server of servers) {
      const retry = await send(server)
      expect(retry.status).toBe(200)
      expect(retry.headers.get('idempotent-replayed')).toBe('true')
      expect(await retry.text()).toBe('{"id":4242,"name":"once"}')
    }
    const reused = await send(servers[1] as RunningServer, '{"id": 4243, "name": "other"}')
    expect(reused.status).toBe(422)
  })
})

describe.skipIf(!postgresKind)('the connections one serve process opens to PostgreSQL', () => {
  let server: RunningServer | undefined
  afterAll(async () => {
    await server?.stop()
  })

  it('starts no webhook dispatcher thread for creates that queue no delivery, and one for the first that does', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const token = await newToken(url)
    const running = await startServer(['--database-url', url, '--rate-limit', 'off'])
    try {
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) => post(running, token, `{"id": ${i + 1}, "name": "n"}`)),
      )
      expect(created.map((res) => res.status)).toEqual(Array(20).fill(200))
      // A dispatcher woken by those commits would hold the free lease within a few milliseconds.
      await sleep(1500)
      expect(running.output()).not.toContain('webhook dispatcher lease acquired')
      await subscribeInSql(url, 'wh_startsdispatch000000000')
      expect((await post(running, token, '{"id": 100, "name": "delivered"}')).status).toBe(200)
      await vi.waitFor(() => expect(running.output()).toContain('webhook dispatcher lease acquired'), {
        timeout: 10_000,
      })
    } finally {
      await running.stop()
    }
  })

  it('stays within --database-pool-size plus three, with one revocation listener', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const token = await newToken(url)
    server = await startServer(['--database-url', url, '--database-pool-size', '2', '--rate-limit', 'off'])
    const running = server
    // With a subscription, the first create queues a delivery, which starts the webhook dispatcher
    // thread and its connections; a burst keeps every pool busy.
    await subscribeInSql(url, 'wh_connections0000000000000')
    expect((await post(running, token, '{"id": 1, "name": "first"}')).status).toBe(200)
    await vi.waitFor(() => expect(running.output()).toContain('webhook dispatcher lease acquired'), {
      timeout: 10_000,
    })
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(running, token, `{"id": ${i + 2}, "name": "n"}`)),
    )
    const sessions = await admin(url, (c) =>
      c.query<{ query: string }>(
        "SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'plantstore'",
      ),
    )
    expect(sessions.rows.filter((s) => s.query.startsWith('LISTEN'))).toHaveLength(1)
    expect(sessions.rows.length).toBeLessThanOrEqual(2 + 3)
  })
})
