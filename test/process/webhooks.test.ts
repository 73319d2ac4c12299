import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { openStore } from '../../src/store/open.js'
import { createWebhook } from '../../src/webhooks/service.js'
import { leaseTakers } from '../helpers/cluster.js'
import { admin, whileLocked } from '../helpers/postgres.js'
import { type RunningServer, runCli, startServer } from '../helpers/process.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { type StoreKind, sqliteKind, storeKinds, tempDir } from '../helpers/stores.js'

// Real processes on one database: what a crash, an outage or a second instance does to delivery.

interface Setup {
  db: string
  tokenFile: string
}

async function setup(kind: StoreKind): Promise<Setup> {
  return { db: await kind.freshUrl(), tokenFile: join(tempDir(), 'token') }
}

async function serve(s: Setup, ...extra: string[]): Promise<RunningServer> {
  return startServer([
    '--database-url',
    s.db,
    '--bootstrap-token-file',
    s.tokenFile,
    '--webhook-allow-private-urls',
    // About delivery across processes, not load shedding: a busy machine must not get creates a 503.
    '--max-event-loop-delay',
    'off',
    ...extra,
  ])
}

function api(server: RunningServer, s: Setup) {
  const token = readFileSync(s.tokenFile, 'utf8').trim()
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> }
  }
}

/** Waits for `count` attempts to arrive at a receiver that holds them, then a second in which no other may. */
async function expectHeldAt(receiver: Receiver, count: number): Promise<void> {
  await receiver.waitFor(count)
  await new Promise((r) => setTimeout(r, 1000))
  expect(receiver.received).toHaveLength(count)
}

/** Answers the held attempts and every later one 200, and waits until `total` have arrived. */
async function answerAll(receiver: Receiver, total: number): Promise<void> {
  receiver.release(200)
  receiver.respondWith(200)
  await receiver.waitFor(total)
}

async function until(probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe.each(storeKinds)('webhook delivery across processes on $name', (kind) => {
  const servers: RunningServer[] = []
  const receivers: Receiver[] = []
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.end()
    for (const r of receivers.splice(0)) await r.close()
  })

  it('delivers every event of a process killed right after its creates answered', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    // Short timeouts keep leases short: the killed process's dispatcher lease and the attempts it had
    // claimed are taken over soon.
    const quick = ['--webhook-timeout', '1s', '--webhook-lease-ttl', '2s']
    const first = await serve(s, ...quick)
    servers.push(first)
    const call = api(first, s)
    const hook = await call('POST', '/webhooks', { url: receiver.url })
    expect(hook.status).toBe(201)
    // Killed the instant the last create answers: some events may be sent, some claimed and some
    // not yet read from the outbox. Every one must arrive.
    const creates = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call('POST', '/plants', { id: i, name: `survivor ${i}` })),
    )
    expect(await first.stop('SIGKILL')).toBeNull()
    expect(creates.every((c) => c.status === 200)).toBe(true)

    servers.push(await serve(s, ...quick))
    await until(async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 30)
    const ids = new Set<number>()
    for (const request of receiver.received) {
      const verified = new Webhook(hook.body.secret as string).verify(
        request.body,
        request.headers as Record<string, string>,
      ) as { type: string; data: { id: number } }
      expect(verified.type).toBe('plant.created')
      ids.add(verified.data.id)
    }
    expect(ids.size).toBe(30)
  })

  it('delivers every event once a receiver that was down comes back', async () => {
    const s = await setup(kind)
    const probe = await startReceiver()
    const port = probe.port
    await probe.close()
    const server = await serve(s, '--webhook-retry-schedule', Array(20).fill('1s').join(','))
    servers.push(server)
    const call = api(server, s)
    const hook = await call('POST', '/webhooks', { url: `http://127.0.0.1:${port}/hook` })
    for (let i = 0; i < 20; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await until(async () => {
      const rows = (await call('GET', `/webhooks/${hook.body.id}/deliveries`)).body.data as unknown as Array<{
        lastError: string | null
      }>
      return rows.length === 20 && rows.every((r) => r.lastError !== null)
    })

    const receiver = await startReceiver(port)
    receivers.push(receiver)
    await until(async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 20)
    const ids = receiver.received.map((r) => JSON.parse(r.body).data.id).sort((a, b) => a - b)
    expect([...new Set(ids)]).toEqual(Array.from({ length: 20 }, (_, i) => i))
  })

  it('sends each event exactly once with two processes on one database and a healthy receiver', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    const a = await serve(s)
    servers.push(a)
    const b = await serve(s)
    servers.push(b)
    const callA = api(a, s)
    const callB = api(b, s)
    const hook = await callA('POST', '/webhooks', { url: receiver.url })
    const creates = Array.from({ length: 100 }, (_, i) =>
      (i % 2 === 0 ? callA : callB)('POST', '/plants', { id: 1000 + i, name: `p${i}` }),
    )
    for (const res of await Promise.all(creates)) expect(res.status).toBe(200)
    await until(async () => {
      const rows = (await callB('GET', `/webhooks/${hook.body.id}/deliveries?limit=500`)).body
        .data as unknown as Array<{
        status: string
      }>
      return rows.length === 100 && rows.every((r) => r.status === 'succeeded')
    })
    expect(receiver.received).toHaveLength(100)
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(100)
    // One of the two did all of it: it took the dispatcher lease, the other never did.
    expect([...leaseTakers(a.output()), ...leaseTakers(b.output())]).toHaveLength(1)
  })

  /**
   * Two processes on one database with a subscription to `url` (made through the standby); resolves
   * once one of them holds the dispatcher lease.
   */
  async function holderAndStandby(s: Setup, url: string, ...extra: string[]) {
    const a = await serve(s, ...extra)
    servers.push(a)
    expect((await api(a, s)('POST', '/webhooks', { url })).status).toBe(201)
    const b = await serve(s, ...extra)
    servers.push(b)
    await until(async () => leaseTakers(a.output()).length + leaseTakers(b.output()).length > 0)
    return leaseTakers(a.output()).length > 0 ? { holder: a, standby: b } : { holder: b, standby: a }
  }

  it('keeps delivering from the standby process once the lease holder is killed outright', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    const { holder, standby } = await holderAndStandby(s, receiver.url, '--webhook-lease-ttl', '2s')
    const call = api(standby, s)
    expect(await holder.stop('SIGKILL')).toBeNull()
    for (let i = 0; i < 10; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    // The killed holder's lease runs out and the standby takes over.
    await until(async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 10)
    expect(leaseTakers(standby.output())).toHaveLength(1)
  })

  it('hands the lease to the standby process at once when the holder stops cleanly', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    // An hour-long lease: only the holder's release can let the standby in within this test.
    const { holder, standby } = await holderAndStandby(s, receiver.url, '--webhook-lease-ttl', '1h')
    const call = api(standby, s)
    expect(await holder.stop('SIGTERM')).toBe(0)
    expect(holder.output()).toContain('webhook dispatcher lease released')
    for (let i = 0; i < 10; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await until(async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 10)
    expect(leaseTakers(standby.output())).toHaveLength(1)
  })

  // The count crosses from the dispatcher's thread to the registry the scrape reads: the same on
  // either store, so SQLite alone spends the time of a process on it.
  it.skipIf(kind.name !== 'sqlite')(
    'counts a subscription disabled for failing in /metrics, beside the warning that says so',
    async () => {
      const s = await setup(kind)
      const receiver = await startReceiver()
      receivers.push(receiver)
      receiver.respondWith(500)
      const server = await serve(s, '--webhook-retry-schedule', '10ms', '--webhook-disable-after', '0s')
      servers.push(server)
      const call = api(server, s)
      const scrape = async () => {
        const metrics = await fetch(`${server.url}/metrics`, {
          headers: { authorization: `Bearer ${readFileSync(s.tokenFile, 'utf8').trim()}` },
        })
        return metrics.text()
      }
      expect(await scrape()).toMatch(/^plantstore_webhook_subscriptions_disabled_total 0$/m)
      const { body } = await call('POST', '/webhooks', { url: receiver.url })
      expect((await call('POST', '/plants', { id: 1, name: 'refused' })).status).toBe(200)
      await until(async () => (await call('GET', `/webhooks/${body.id}`)).body.disabled === true)
      await until(async () => /^plantstore_webhook_subscriptions_disabled_total 1$/m.test(await scrape()))
      expect(server.output()).toContain('webhook disabled: its attempts have failed for too long')
    },
  )

  it('starts its dispatcher with the first subscription, made in this process or another', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    const quick = ['--webhook-poll-interval', '50ms']
    const server = await serve(s, ...quick)
    servers.push(server)
    const call = api(server, s)
    // SQLite fans events out as it commits them, so creates with no subscription need no dispatcher;
    // PostgreSQL's dispatcher fans them out, so there a create is work that starts it.
    if (kind.name === 'sqlite')
      for (let i = 0; i < 5; i++)
        expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    // Thirty checks, and time for a started dispatcher to take the free lease.
    await new Promise((r) => setTimeout(r, 1500))
    expect(leaseTakers(server.output())).toEqual([])
    const metrics = await fetch(`${server.url}/metrics`, {
      headers: { authorization: `Bearer ${readFileSync(s.tokenFile, 'utf8').trim()}` },
    })
    expect(await metrics.text()).toMatch(/^plantstore_webhook_dispatcher_lease_held 0$/m)

    // A subscription made by another process is found by the next check.
    const other = await serve(s, ...quick)
    servers.push(other)
    expect((await api(other, s)('POST', '/webhooks', { url: receiver.url })).status).toBe(201)
    await other.stop('SIGKILL')
    await until(async () => leaseTakers(server.output()).length === 1)
    expect((await call('POST', '/plants', { id: 100, name: 'after' })).status).toBe(200)
    await until(async () => receiver.received.length === 1)
    expect(JSON.parse(receiver.received[0]?.body ?? '{}').data.id).toBe(100)
  })

  it('keeps answering creates while a receiver hangs, and stops cleanly with attempts in flight, logging no error', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    receiver.respondWith('hang')
    const first = await serve(s, '--webhook-timeout', '5m')
    servers.push(first)
    const call = api(first, s)
    await call('POST', '/webhooks', { url: receiver.url })
    for (let i = 0; i < 20; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await receiver.waitFor(1)
    expect(await first.stop('SIGTERM')).toBe(0)
    expect(first.output()).toContain('"msg":"stopped"')
    expect(errorLines(first.output())).toEqual([])

    // The attempts cut short were handed back: the next process sends every event.
    receiver.respondWith(200)
    servers.push(await serve(s))
    await until(async () => new Set(receiver.received.map((r) => r.headers['webhook-id'])).size === 20)
  })

  it('stops cleanly with attempts in flight when --drain-delay takes much of --shutdown-timeout', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    receiver.respondWith('hang')
    // The attempts hang for minutes: only their being cut short at the stop lets it end in time. The
    // time left after the drain is for closing on a machine busy with other work, not the point.
    const first = await serve(s, '--webhook-timeout', '5m', '--drain-delay', '3s', '--shutdown-timeout', '8s')
    servers.push(first)
    const call = api(first, s)
    await call('POST', '/webhooks', { url: receiver.url })
    expect((await call('POST', '/plants', { id: 1, name: 'p1' })).status).toBe(200)
    await receiver.waitFor(1)
    expect(await first.stop('SIGTERM')).toBe(0)
    expect(errorLines(first.output())).toEqual([])

    // Handed back, not left under a lease: the next process sends it at once.
    receiver.respondWith(200)
    servers.push(await serve(s))
    await until(async () => receiver.received.length >= 2, 10_000)
  })

  it('keeps at most 16 attempts in flight to one subscription, counting those already in flight', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    const server = await serve(s, '--webhook-timeout', '1m')
    servers.push(server)
    const call = api(server, s)
    const since = new Date(Date.now() - 1000).toISOString()
    const hook = await call('POST', '/webhooks', { url: receiver.url })
    for (let i = 0; i < 20; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await until(async () => {
      const rows = (await call('GET', `/webhooks/${hook.body.id}/deliveries`)).body.data as unknown as Array<{
        status: string
      }>
      return rows.length === 20 && rows.every((r) => r.status === 'succeeded')
    })
    receiver.respondWith('hang')
    for (let i = 20; i < 30; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await receiver.waitFor(30)
    // The 20 delivered events become due at once while 10 attempts hang: only 6 of them fit.
    expect((await call('POST', `/webhooks/${hook.body.id}/replay`, { since })).body.queued).toBe(30)
    await expectHeldAt(receiver, 36)
    await answerAll(receiver, 60)
  })

  it('keeps at most --webhook-max-in-flight attempts in flight to one subscription', async () => {
    const s = await setup(kind)
    const receiver = await startReceiver()
    receivers.push(receiver)
    const server = await serve(s, '--webhook-timeout', '1m', '--webhook-max-in-flight', '3')
    servers.push(server)
    const call = api(server, s)
    await call('POST', '/webhooks', { url: receiver.url })
    receiver.respondWith('hang')
    for (let i = 0; i < 5; i++)
      expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
    await expectHeldAt(receiver, 3)
    await answerAll(receiver, 5)
  })

  // These do not depend on the store kind: once is enough.
  it.skipIf(kind.name !== 'sqlite')(
    'sends every attempt to subscriptions that share a receiver host at once, none timing out unsent',
    async () => {
      const s = await setup(kind)
      const receiver = await startReceiver()
      receivers.push(receiver)
      receiver.respondWith('hang')
      const server = await serve(s, '--webhook-timeout', '6s', '--webhook-retry-schedule', '1h')
      servers.push(server)
      const call = api(server, s)
      // Two subscriptions on one host, 12 events: 24 attempts, each subscription within its 16.
      const hooks = [
        await call('POST', '/webhooks', { url: `${receiver.url}?to=a` }),
        await call('POST', '/webhooks', { url: `${receiver.url}?to=b` }),
      ]
      for (let i = 0; i < 12; i++)
        expect((await call('POST', '/plants', { id: i, name: `p${i}` })).status).toBe(200)
      // Every attempt reaches the receiver well before the timeout, none waits for a free socket.
      await receiver.waitFor(24, 4000)
      receiver.release(200)
      for (const hook of hooks) {
        await until(async () => {
          const rows = (await call('GET', `/webhooks/${hook.body.id}/deliveries`)).body
            .data as unknown as Array<{
            status: string
            attempts: number
          }>
          return rows.length === 12 && rows.every((r) => r.status === 'succeeded' && r.attempts === 1)
        })
      }
    },
  )

  it.skipIf(kind.name !== 'sqlite')(
    'takes a 2xx whose body never ends as delivered, reading no more of it than it needs',
    async () => {
      const chunk = Buffer.alloc(16 * 1024, 'x')
      const endless = createServer((req, res) => {
        req.resume()
        res.writeHead(200)
        const more = () => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', more)
        }
        more()
      })
      endless.listen(0, '127.0.0.1')
      await once(endless, 'listening')
      try {
        const s = await setup(kind)
        const server = await serve(s, '--webhook-timeout', '5s', '--webhook-retry-schedule', '1h')
        servers.push(server)
        const call = api(server, s)
        const { port } = endless.address() as AddressInfo
        const hook = await call('POST', '/webhooks', { url: `http://127.0.0.1:${port}/hook` })
        expect((await call('POST', '/plants', { id: 1, name: 'chatty' })).status).toBe(200)
        let delivery: Record<string, unknown> | undefined
        await until(async () => {
          const rows = (await call('GET', `/webhooks/${hook.body.id}/deliveries`)).body
            .data as unknown as Array<Record<string, unknown>>
          delivery = rows[0]
          return delivery?.lastAttemptAt !== null && delivery?.lastAttemptAt !== undefined
        })
        expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 200 })
        expect(delivery?.lastDurationMs).toBeLessThan(5000)
      } finally {
        endless.closeAllConnections()
        endless.close()
      }
    },
  )

  it.skipIf(kind.name !== 'sqlite')('delivers from a throwaway sqlite::memory: store too', async () => {
    const s = { ...(await setup(kind)), db: 'sqlite::memory:' }
    const receiver = await startReceiver()
    receivers.push(receiver)
    const server = await serve(s)
    servers.push(server)
    const call = api(server, s)
    await call('POST', '/webhooks', { url: receiver.url })
    expect((await call('POST', '/plants', { id: 5, name: 'ephemeral' })).status).toBe(200)
    const [request] = await receiver.waitFor(1)
    expect(JSON.parse(request?.body ?? '{}')).toMatchObject({ type: 'plant.created', data: { id: 5 } })
  })

  it.skipIf(kind.name !== 'sqlite')(
    'lists the webhook settings in serve --help and refuses a bad retry schedule',
    async () => {
      const help = await runCli(['serve', '--help'])
      for (const flag of [
        '--webhook-allow-private-urls',
        '--webhook-retry-schedule',
        '--webhook-timeout',
        '--webhook-disable-after',
      ]) {
        expect(help.stdout).toContain(flag)
      }
      const bad = await runCli([
        'serve',
        '--port',
        '0',
        '--database-url',
        'sqlite::memory:',
        '--webhook-retry-schedule',
        '5s,soon',
      ])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain('--webhook-retry-schedule (WEBHOOK_RETRY_SCHEDULE)')
    },
  )
})

/** The log lines at error level or above (pino: 50 error, 60 fatal). */
function errorLines(log: string): string[] {
  return log.split('\n').filter((line) => /"level":(5|6)\d/.test(line))
}

describe.each(storeKinds)('a SIGTERM on $name with the webhook dispatcher stuck on the database', (kind) => {
  it.skipIf(kind.name !== 'postgres')(
    'ends a dispatcher that cannot finish in time with a warning, not an error',
    async () => {
      const s = await setup(kind)
      const receiver = await startReceiver()
      // Every query on the webhook tables waits long past the dispatcher's time to stop, not past
      // --database-timeout: nothing fails, the stop is merely slow.
      const server = await serve(s, '--database-timeout', '60s', '--webhook-poll-interval', '20ms')
      try {
        await api(server, s)('POST', '/webhooks', { url: receiver.url })
        await until(async () => leaseTakers(server.output()).length === 1)
        await whileLocked(s.db, 'webhook_deliveries, leases', async () => {
          // A pass is now waiting on the lock; the stop waits for it.
          await new Promise((r) => setTimeout(r, 200))
          expect(await server.stop('SIGTERM')).toBe(0)
        })
        expect(server.output()).toContain('webhook dispatcher did not stop in time')
        expect(errorLines(server.output())).toEqual([])
      } finally {
        await server.end()
        await receiver.close()
      }
    },
  )
})

describe('a webhook dispatcher thread that fails to start', () => {
  it('is started again, so that events committed afterwards are still delivered', async () => {
    const s = await setup(sqliteKind)
    const path = s.db.slice('sqlite:'.length)
    const receiver = await startReceiver()
    const server = await serve(s, '--webhook-poll-interval', '50ms')
    try {
      // The subscription is committed, then the write lock is taken at once and held past the 5 s a
      // connection waits for it while opening: the dispatcher thread this subscription starts cannot
      // open its store.
      const store = await openStore({ kind: 'sqlite', path })
      const locker = new Database(path)
      try {
        await createWebhook(store.webhooks, {
          url: receiver.url,
          events: ['plant.created'],
          description: null,
        })
        locker.exec('BEGIN IMMEDIATE')
        await until(async () => server.output().includes('webhook dispatcher stopped unexpectedly'), 15_000)
      } finally {
        if (locker.inTransaction) locker.exec('ROLLBACK')
        locker.close()
        await store.close()
      }
      expect((await api(server, s)('POST', '/plants', { id: 1, name: 'after the failure' })).status).toBe(200)
      const [request] = await receiver.waitFor(1, 15_000)
      expect(JSON.parse(request?.body ?? '{}')).toMatchObject({ type: 'plant.created', data: { id: 1 } })
    } finally {
      await server.end()
      await receiver.close()
    }
  }, 40_000)
})

describe.each(storeKinds)('a webhook dispatcher thread started on $name while a migration runs', (kind) => {
  it.skipIf(kind.name !== 'postgres')(
    'delivers without waiting for it: the process that started the thread has migrated',
    async () => {
      const s = await setup(kind)
      const receiver = await startReceiver()
      const server = await serve(s, '--webhook-poll-interval', '50ms')
      try {
        const call = api(server, s)
        // Another instance's migration holds the lock (with no query timeout: a stalled link would
        // hold the thread as long). The first subscription starts the thread only now.
        await admin(s.db, async (client) => {
          await client.query('SELECT pg_advisory_lock($1, $2)', [0x706c_616e, 1])
          expect((await call('POST', '/webhooks', { url: receiver.url })).status).toBe(201)
          expect((await call('POST', '/plants', { id: 1, name: 'during a migration' })).status).toBe(200)
          const [request] = await receiver.waitFor(1, 15_000)
          expect(JSON.parse(request?.body ?? '{}')).toMatchObject({ type: 'plant.created', data: { id: 1 } })
        })
      } finally {
        await server.end()
        await receiver.close()
      }
    },
    40_000,
  )
})
