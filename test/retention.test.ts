import { statSync } from 'node:fs'
import { join } from 'node:path'
import pino from 'pino'
import { describe, expect, it, vi } from 'vitest'
import { plantEvent } from '../src/plants/events.js'
import { scheduleRetention, sweepOnce } from '../src/retention.js'
import { openSqlite } from '../src/store/sqlite/index.js'
import { TokenService } from '../src/tokens/service.js'
import { openFresh, storeKinds, tempDir } from './helpers/stores.js'

const DAY = 86_400_000
const settings = {
  eventsRetentionMs: 7 * DAY,
  tokensRetentionMs: 30 * DAY,
  retentionIntervalMs: 0,
  walCheckpointIntervalMs: 0,
}

describe.each(storeKinds)('retention sweep on $name', (kind) => {
  it('deletes old events and long-expired or revoked tokens, and keeps the rest', async () => {
    const { store } = await openFresh(kind)
    try {
      const now = Date.now()
      const at = (daysAgo: number) => new Date(now - daysAgo * DAY)
      await store.plants.create(
        { id: 1n, name: 'old' },
        { event: plantEvent('plant.created', { id: 1n, name: 'old' }, at(8)) },
      )
      await store.plants.create(
        { id: 2n, name: 'new' },
        { event: plantEvent('plant.created', { id: 2n, name: 'new' }, at(1)) },
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
      const stop = scheduleRetention(
        store,
        { ...settings, walCheckpointIntervalMs: 60_000 },
        pino({ level: 'silent' }),
      )
      await vi.advanceTimersByTimeAsync(60_000)
      stop()
      expect(statSync(`${path}-wal`).size).toBe(0)
      expect(await store.plants.get(1999n)).toEqual({ id: 1999n, name: 'p1999' })
    } finally {
      vi.useRealTimers()
      await store.close()
    }
  })
})

describe('retention sweep extension point', () => {
  it('sweeps expired idempotency keys, and tables of other features only where they exist', async () => {
    const store = openSqlite({ path: ':memory:' })
    try {
      expect(await sweepOnce(store, settings)).not.toHaveProperty('webhook_deliveries')
      const now = Date.now()
      const insert = store.db.prepare(
        "INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at) VALUES ('t', ?, 'f', 200, '{}', ?)",
      )
      insert.run('old', now - 1000)
      insert.run('live', now + 60_000)
      expect(await sweepOnce(store, settings, new Date(now))).toMatchObject({ idempotency_keys: 1 })
      expect(store.db.prepare('SELECT key FROM idempotency_keys').pluck().all()).toEqual(['live'])
      // A table without the column the sweep compares is left alone rather than failing the sweep.
      store.db.exec('CREATE TABLE webhook_deliveries (id INTEGER PRIMARY KEY, attempted_at INTEGER)')
      expect(await sweepOnce(store, settings)).not.toHaveProperty('webhook_deliveries')
      store.db.exec('DROP TABLE webhook_deliveries')
      store.db.exec('CREATE TABLE webhook_deliveries (id INTEGER PRIMARY KEY, created_at INTEGER)')
      store.db.prepare('INSERT INTO webhook_deliveries (created_at) VALUES (?), (?)').run(now - 8 * DAY, now)
      expect(await sweepOnce(store, settings, new Date(now))).toMatchObject({ webhook_deliveries: 1 })
    } finally {
      await store.close()
    }
  })
})
