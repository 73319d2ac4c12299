import { statSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import { createMetrics } from '../src/metrics/registry.js'
import { plantEvent } from '../src/plants/events.js'
import { scheduleRetention, sweepOnce } from '../src/retention.js'
import { CHUNK, inChunks } from '../src/store/chunks.js'
import { openStore } from '../src/store/open.js'
import { openSqlite } from '../src/store/sqlite/index.js'
import { SWEEPS } from '../src/store/sqlite/maintenance.js'
import type { ClaimedDelivery, Store } from '../src/store/types.js'
import { TokenService } from '../src/tokens/service.js'
import { seenDuring } from './helpers/event-loop.js'
import { captureLines } from './helpers/log.js'
import { whileLocked } from './helpers/postgres.js'
import { openFresh, storeKinds, tempDir } from './helpers/stores.js'
import { insertUnfannedEvent, subscriptionRecord } from './helpers/webhooks.js'

const DAY = 86_400_000
const settings = {
  eventsRetentionMs: 7 * DAY,
  tokensRetentionMs: 30 * DAY,
  retentionIntervalMs: 0,
  walCheckpointIntervalMs: 0,
}

/** Claims the one due delivery and records its final attempt, answered `status`, at `at`. */
async function finishOne(store: Store, at: Date, status: number): Promise<ClaimedDelivery> {
  const [delivery] = await store.webhooks.claim({
    owner: 'test',
    now: at,
    leaseMs: 60_000,
    limit: 1,
    perWebhook: 1,
    inFlight: new Map(),
  })
  if (!delivery) throw new Error('no delivery was due')
  await store.webhooks.complete([
    {
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      owner: 'test',
      at,
      ok: status < 300,
      statusCode: status,
      error: null,
      durationMs: 3,
      body: null,
      bodyTruncated: false,
      nextAttemptAt: null,
      disableIfFailingSince: new Date(0),
      failingContinuesSince: new Date(0),
    },
  ])
  return delivery
}

describe.each(storeKinds)('retention sweep on $name', (kind) => {
  it('deletes old events and long-expired or revoked tokens, and keeps the rest', async () => {
    const { store } = await openFresh(kind)
    try {
      const now = Date.now()
      const at = (daysAgo: number) => new Date(now - daysAgo * DAY)
      await store.plants.create(
        { id: 1n, name: 'old' },
        { event: () => plantEvent('plant.created', { id: 1n, name: 'old' }, at(8)) },
      )
      await store.plants.create(
        { id: 2n, name: 'new' },
        { event: () => plantEvent('plant.created', { id: 2n, name: 'new' }, at(1)) },
      )

      const clock = { now: now - 40 * DAY }
      const tokens = new TokenService(store.tokens, { now: () => clock.now })
      const longExpired = await tokens.create('long expired', ['plants:read'], DAY)
      const longRevoked = await tokens.create('long revoked', ['plants:read'])
      await tokens.revoke(longRevoked.record.id)
      clock.now = now - DAY
      const recentlyRevoked = await tokens.create('recently revoked', ['plants:read'])
      await tokens.revoke(recentlyRevoked.record.id)
      const live = await tokens.create('live', ['plants:read'])

      // Only events already fanned out to subscriptions may go: each store fanned them out as it
      // wrote them, so the dispatcher finds none left.
      expect(await store.webhooks.fanOut(100, new Date(now))).toBe(0)
      const counts = await sweepOnce(store, settings, new Date(now))
      expect(counts).toMatchObject({ events: 1, tokens: 2 })
      const events = await store.events.listSince(0, 10)
      expect(events.map((e) => JSON.parse(e.payload).data.id)).toEqual([2])
      const left = (await store.tokens.list()).map((t) => t.id).sort()
      expect(left).toEqual([recentlyRevoked.record.id, live.record.id].sort())
      expect(longExpired.record.id).not.toBe(live.record.id)
      // Plants are never swept.
      expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'old' })
    } finally {
      await store.close()
    }
  })
})

describe('the scheduled retention sweep', () => {
  it('sweeps soon after start and then every interval, counting what it deleted, and logs a failed run', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout', 'clearInterval', 'clearTimeout'] })
    const store = openSqlite({ path: ':memory:' })
    const { lines: written, stream } = captureLines()
    const logger = pino({ level: 'info' }, stream)
    const lines = () => written.map((line) => JSON.parse(line) as { level: number; msg: string })
    const metrics = createMetrics()
    try {
      const tokens = new TokenService(store.tokens, { now: () => Date.now() - 40 * DAY })
      const { record } = await tokens.create('old', ['plants:read'], DAY)
      const stop = scheduleRetention(store, { ...settings, retentionIntervalMs: 60_000 }, logger, metrics)
      // The first run comes a second after start, before the first interval.
      await vi.advanceTimersByTimeAsync(1000)
      expect(await store.tokens.find(record.id)).toBeUndefined()
      expect((await metrics.retentionDeleted.get()).values).toContainEqual(
        expect.objectContaining({ labels: { kind: 'tokens' }, value: 1 }),
      )
      expect(lines().filter((l) => l.msg === 'retention sweep done')).toHaveLength(1)

      const sweep = vi.spyOn(store.maintenance, 'sweep').mockRejectedValue(new Error('disk gone'))
      await vi.advanceTimersByTimeAsync(60_000)
      expect(sweep).toHaveBeenCalledTimes(1)
      expect(lines().find((l) => l.msg === 'retention sweep failed')?.level).toBe(40)
      stop()
      await vi.advanceTimersByTimeAsync(120_000)
      expect(sweep).toHaveBeenCalledTimes(1)
    } finally {
      vi.useRealTimers()
      await store.close()
    }
  })
})

describe('stopping the scheduled retention', () => {
  it('ends a sweep before its next chunk, logs no failure for it, and resolves once it has ended', async () => {
    const store = openSqlite({ path: ':memory:' })
    const { lines: written, stream } = captureLines()
    let finishChunk: () => void = () => {}
    let seen: AbortSignal | undefined
    // A sweep stuck in its first chunk, as one waiting on a lock is.
    const sweep = vi.spyOn(store.maintenance, 'sweep').mockImplementation(async (policy) => {
      seen = policy.signal
      await new Promise<void>((resolve) => {
        finishChunk = resolve
      })
      policy.signal?.throwIfAborted()
      return {}
    })
    try {
      const stop = scheduleRetention(store, { ...settings, retentionIntervalMs: 60_000 }, pino(stream))
      await vi.waitFor(() => expect(sweep).toHaveBeenCalledTimes(1), { timeout: 3000 })
      let stopped = false
      const stopping = stop().then(() => {
        stopped = true
      })
      expect(seen?.aborted).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(stopped).toBe(false)
      finishChunk()
      await stopping
      expect(written.map((line) => JSON.parse(line).msg)).not.toContain('retention sweep failed')
    } finally {
      await store.close()
    }
  })
})

describe('SQLite WAL checkpoint', () => {
  it('truncates the write-ahead log, on its schedule', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'setTimeout'] })
    const path = join(tempDir(), 'wal.db')
    const store = openSqlite({ path })
    try {
      store.db.pragma('wal_autocheckpoint = 0')
      await store.plants.importBatch(
        Array.from({ length: 2000 }, (_, i) => ({ plant: { id: BigInt(i), name: `p${i}` } })),
      )
      expect(statSync(`${path}-wal`).size).toBeGreaterThan(0)
      // The log was last written a while ago: a log written within the last second is only rewound.
      const past = new Date(Date.now() - 5000)
      utimesSync(`${path}-wal`, past, past)
      const stop = scheduleRetention(
        store,
        { ...settings, walCheckpointIntervalMs: 60_000 },
        pino({ level: 'silent' }),
      )
      await vi.advanceTimersByTimeAsync(60_000)
      stop()
      vi.useRealTimers()
      // The checkpoint runs in the checkpoint thread: its answer comes by message.
      await vi.waitFor(() => expect(statSync(`${path}-wal`).size).toBe(0))
      expect(await store.plants.get(1999n)).toEqual({ id: 1999n, name: 'p1999' })
    } finally {
      vi.useRealTimers()
      await store.close()
    }
  })
})

describe.each(storeKinds)('retention of webhook events and deliveries on $name', (kind) => {
  it('never drops an event still owed to a receiver, and drops finished deliveries first', async () => {
    const { store } = await openFresh(kind)
    try {
      const now = Date.now()
      const old = new Date(now - 8 * DAY)
      const attempted = new Date(now - 7 * DAY - 60_000)
      const created = new Date(now - 9 * DAY)
      await store.webhooks.insert(subscriptionRecord('wh_retention000000000000000', created))
      for (const id of [1n, 2n]) {
        const plant = { id, name: `p${id}` }
        await store.plants.create(plant, { event: () => plantEvent('plant.created', plant, old) })
      }
      // Both events fanned out to the subscription as they were written: two pending deliveries,
      // created long ago with their events; the dispatcher finds nothing left to fan out.
      expect(await store.webhooks.fanOut(100, old)).toBe(0)
      // One delivery succeeded just over the retention ago; the other stays pending (its receiver is down).
      const first = await finishOne(store, attempted, 200)
      const counts = await sweepOnce(store, settings, new Date(now))
      expect(counts).toMatchObject({ webhook_deliveries: 1, events: 1 })
      const left = await store.events.listSince(0, 10)
      expect(left).toHaveLength(1)
      expect(left[0]?.id).not.toBe(first.eventId)
      const deliveries = await store.webhooks.listDeliveries('wh_retention000000000000000', { limit: 10 })
      expect(deliveries.map((d) => d.status)).toEqual(['pending'])
    } finally {
      await store.close()
    }
  })

  it('keeps an old delivery that finished within the retention, with its event', async () => {
    const { store } = await openFresh(kind)
    try {
      const now = Date.now()
      const old = new Date(now - 8 * DAY)
      await store.webhooks.insert(subscriptionRecord('wh_retention000000000000001', old))
      const plant = { id: 3n, name: 'p3' }
      await store.plants.create(plant, { event: () => plantEvent('plant.created', plant, old) })
      await store.webhooks.fanOut(100, old)
      // Created eight days ago, retried and finished a minute ago: its outcome is new.
      const delivery = await finishOne(store, new Date(now - 60_000), 500)
      const counts = await sweepOnce(store, settings, new Date(now))
      expect(counts).toMatchObject({ webhook_deliveries: 0, events: 0 })
      const deliveries = await store.webhooks.listDeliveries('wh_retention000000000000001', { limit: 10 })
      expect(deliveries.map((d) => [d.id, d.status])).toEqual([[delivery.id, 'failed']])
      expect((await store.events.listSince(0, 10)).map((e) => e.id)).toEqual([delivery.eventId])
    } finally {
      await store.close()
    }
  })

  it('keeps events that have not been fanned out yet, however old', async () => {
    const { store } = await openFresh(kind)
    try {
      const now = Date.now()
      const plant = { id: 7n, name: 'waiting' }
      const event = plantEvent('plant.created', plant, new Date(now - 30 * DAY))
      // Each store fans a create out as it writes it; an event still waiting was left by an earlier version.
      await insertUnfannedEvent(store, event)
      expect(await sweepOnce(store, settings, new Date(now))).toMatchObject({ events: 0 })
      expect(await store.events.listSince(0, 10)).toHaveLength(1)
    } finally {
      await store.close()
    }
  })
})

describe('SQLite idempotency key retention', () => {
  it('sweeps expired idempotency keys and keeps live ones', async () => {
    const store = openSqlite({ path: ':memory:' })
    try {
      const now = Date.now()
      const insert = store.db.prepare(
        "INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at) VALUES ('t', ?, 'f', 200, '{}', ?)",
      )
      insert.run('old', now - 1000)
      insert.run('live', now + 60_000)
      expect(await sweepOnce(store, settings, new Date(now))).toMatchObject({ idempotency_keys: 1 })
      expect(store.db.prepare('SELECT key FROM idempotency_keys').pluck().all()).toEqual(['live'])
    } finally {
      await store.close()
    }
  })

  it('deletes a backlog of expired keys in chunks, letting requests run between them and stopping between them', async () => {
    const store = openSqlite({ path: ':memory:' })
    try {
      const now = Date.now()
      const insert = store.db.prepare(
        "INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at) VALUES ('t', ?, 'f', 200, '{}', ?)",
      )
      const expire = (count: number) =>
        store.db.transaction(() => {
          for (let i = 0; i < count; i++) insert.run(`old-${i}`, now - 1000)
        })()
      insert.run('live', now + 60_000)
      const left = () => store.db.prepare('SELECT count(*) FROM idempotency_keys').pluck().get()

      expire(2500)
      const [counts, seen] = await seenDuring(() => sweepOnce(store, settings, new Date(now)), left)
      expect(counts).toMatchObject({ idempotency_keys: 2500 })
      // A request between two chunks finds the backlog part deleted.
      expect(seen.some((n) => (n as number) > 1 && (n as number) < 2501)).toBe(true)
      expect(left()).toBe(1)

      // Stopped after its first chunk, it deletes no further one.
      expire(2500)
      const stopping = new AbortController()
      setImmediate(() => stopping.abort())
      await expect(sweepOnce(store, settings, new Date(now), stopping.signal)).rejects.toThrow()
      expect(left()).toBe(1 + 1500)
    } finally {
      await store.close()
    }
  })
})

describe('the SQLite retention sweep on the event loop', () => {
  it('walks old events and finished deliveries by their keys and indexes, never a whole table', async () => {
    const store = openSqlite({ path: ':memory:' })
    try {
      for (const sweep of SWEEPS.filter((s) => s.kind !== 'tokens')) {
        const params = sweep.kind === 'events' ? { cutoff: 1, limit: 1, end: 1 } : { cutoff: 1, limit: 1 }
        const plan = (
          store.db.prepare(`EXPLAIN QUERY PLAN ${sweep.sql}`).all(params) as Array<{
            detail: string
          }>
        ).map((row) => row.detail)
        // Old events are a range of seq (the integer key), up to the first young one.
        expect(plan.join(' | ')).toMatch(
          /USING INTEGER PRIMARY KEY \(rowid<\?\)|USING (COVERING )?INDEX webhook_deliveries_by_webhook/,
        )
        // A SCAN of events or deliveries reads every row, however few are old.
        expect(plan.filter((detail) => /^SCAN (e|d|events|webhook_deliveries)\b/.test(detail))).toEqual([])
      }
    } finally {
      await store.close()
    }
  })
})

describe('deleting in chunks', () => {
  it('rests between two chunks at least as long as the chunk took, leaving requests half the time', async () => {
    const calls: Array<{ start: number; end: number }> = []
    const total = await inChunks(() => {
      const start = performance.now()
      while (performance.now() - start < 15) {}
      calls.push({ start, end: performance.now() })
      return calls.length < 4 ? CHUNK : 3
    })
    expect(total).toBe(3 * CHUNK + 3)
    for (let i = 1; i < calls.length; i++) {
      const previous = calls[i - 1] as { start: number; end: number }
      const rest = (calls[i]?.start ?? 0) - previous.end
      expect(rest).toBeGreaterThanOrEqual((previous.end - previous.start) * 0.9)
    }
  })
})

describe.each(storeKinds)('a retention sweep on $name that meets a lock held elsewhere', (kind) => {
  it.skipIf(kind.name !== 'postgres')(
    'gives up at its lock timeout, long before the database timeout, for its next run to retry',
    async () => {
      const url = await kind.freshUrl()
      const store = await openStore({ kind: 'postgres', url }, { timeoutMs: 120_000 })
      try {
        await whileLocked(url, 'webhook_deliveries', async () => {
          // Without a lock timeout the sweep would wait here for the 120 s of --database-timeout.
          await expect(sweepOnce(store, settings)).rejects.toMatchObject({ code: '55P03' })
        })
        expect(await sweepOnce(store, settings)).toMatchObject({ webhook_deliveries: 0 })
      } finally {
        await store.close()
      }
    },
    30_000,
  )
})
