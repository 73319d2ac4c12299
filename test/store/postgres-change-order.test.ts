import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import type { Plant } from '../../src/plants/model.js'
import { openPostgres, type PostgresStore } from '../../src/store/postgres/index.js'
import { OUTBOX_LOCK } from '../../src/store/postgres/outbox-lock.js'
import type { EventStore, OutboxEvent } from '../../src/store/types.js'
import { postgresKind } from '../helpers/stores.js'

// A sequence number is taken before commit, so seq order is commit order only if every writer takes
// its seq and commits under the outbox lock (outbox-lock.ts). These tests make a transaction that took
// its seq first commit late, while two instances go on writing, and read the feed as a client does.

type ChangeType = 'plant.created' | 'plant.updated' | 'plant.deleted'

function changeEvent(type: ChangeType, plant: Plant, at: Date): OutboxEvent {
  return {
    ...plantEvent(type, plant, at),
    change: { plantId: plant.id, actor: { tokenId: 'tok_a' }, requestId: null, before: null },
  }
}

/**
 * Reads the feed as a client keeping `next` does, until stopped, then to its end. Each page must
 * start after the one before and hold each change once; `lastSeq` may pass a seq only once that seq
 * is committed, which the caller checks against what it holds open.
 */
function follow(events: EventStore) {
  const seen: number[] = []
  const nexts: number[] = []
  let afterSeq = 0
  let stopped = false
  const readPage = async () => {
    const page = await events.changes({ afterSeq, limit: 7 })
    for (const change of page.changes) {
      expect(change.seq).toBeGreaterThan(afterSeq)
      seen.push(change.seq)
    }
    expect(page.lastSeq).toBeGreaterThanOrEqual(afterSeq)
    afterSeq = page.lastSeq
    nexts.push(afterSeq)
    return page.changes.length
  }
  const done = (async () => {
    while (!stopped) {
      await readPage()
      await sleep(2)
    }
    while ((await readPage()) > 0) {}
  })()
  // Reported by stop(), not as an unhandled rejection meanwhile.
  done.catch(() => {})
  return {
    seen,
    nexts,
    get afterSeq() {
      return afterSeq
    },
    async stop() {
      stopped = true
      await done
    },
  }
}

describe.skipIf(!postgresKind)('PostgreSQL change feed order across instances', () => {
  const open: PostgresStore[] = []
  const clients: pg.Client[] = []
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})))
    await Promise.all(open.splice(0).map((s) => s.close().catch(() => {})))
  })
  const twoInstances = async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    const a = await openPostgres({ url })
    open.push(a)
    const b = await openPostgres({ url })
    open.push(b)
    return { url, a, b }
  }
  const allChanges = async (store: PostgresStore) =>
    (
      await store.pool.query<{ seq: number }>(
        "SELECT seq::int AS seq FROM events WHERE type LIKE 'plant.%' ORDER BY seq",
      )
    ).rows.map((r) => r.seq)

  it('gives every change once and in seq order while slow transactions commit after later ones', async () => {
    const { a, b } = await twoInstances()
    // Every event of a plant named slow… takes its seq, then holds its transaction open a while.
    await a.pool.query(`
      CREATE FUNCTION slow_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(0.15); RETURN NEW; END $$;
      CREATE TRIGGER slow_event BEFORE INSERT ON events FOR EACH ROW
        WHEN (NEW.payload LIKE '%"name":"slow%') EXECUTE FUNCTION slow_event()`)
    const reader = follow(a.events)
    const name = (id: bigint) => (id % 9n === 0n ? `slow ${id}` : `p${id}`)
    const created = (id: bigint) => (at: Date) => changeEvent('plant.created', { id, name: name(id) }, at)
    const writer = async (store: PostgresStore, from: bigint) => {
      const ids = Array.from({ length: 30 }, (_, i) => from + BigInt(i))
      // Creates one at a time and in groups, side by side with batches of their own transaction.
      await Promise.all(
        ids.slice(0, 20).map((id) => store.plants.create({ id, name: name(id) }, { event: created(id) })),
      )
      await Promise.all([
        store.plants.createMany(
          ids.slice(20).map((id) => ({ plant: { id, name: name(id) }, event: created(id) })),
        ),
        ...ids
          .slice(0, 10)
          .map((id) =>
            store.plants.update(
              id,
              { name: `${name(id)}!` },
              { event: (plant, at) => changeEvent('plant.updated', plant, at) },
            ),
          ),
      ])
      await Promise.all([
        store.plants.removeMany(ids.slice(20, 25), {
          allowMissing: false,
          event: (plant, at) => changeEvent('plant.deleted', plant, at),
        }),
        ...ids
          .slice(10, 15)
          .map((id) =>
            store.plants.remove(id, { event: (plant, at) => changeEvent('plant.deleted', plant, at) }),
          ),
      ])
    }
    await Promise.all([writer(a, 1000n), writer(b, 2000n), writer(a, 3000n), writer(b, 4000n)])
    await reader.stop()

    const stored = await allChanges(a)
    expect(stored).toHaveLength(4 * (30 + 10 + 10))
    expect(reader.seen).toEqual(stored)
  }, 60_000)

  it('never resumes past a change whose transaction is still open', async () => {
    const { url, a, b } = await twoInstances()
    const first = { id: 1n, name: 'first' }
    await a.plants.create(first, { event: (at) => changeEvent('plant.created', first, at) })
    const reader = follow(b.events)

    // A writer that takes its seq under the lock, as the stores do, and stays in its transaction.
    const held = new pg.Client({ connectionString: url })
    clients.push(held)
    await held.connect()
    await held.query('BEGIN')
    await held.query('SELECT pg_advisory_xact_lock($1, $2)', [...OUTBOX_LOCK])
    const inserted = await held.query<{ seq: number }>(
      `INSERT INTO events (type, payload, created_at, fanned_out_at, plant_id)
       VALUES ('plant.created', $1, now(), now(), 99) RETURNING seq::int AS seq`,
      [changeEvent('plant.created', { id: 99n, name: 'held' }, new Date()).payload],
    )
    const heldSeq = inserted.rows[0]?.seq as number

    // Both instances write meanwhile; their writes may wait, but none may be read before it.
    const writes = Array.from({ length: 20 }, (_, i) => {
      const plant = { id: BigInt(100 + i), name: `later ${i}` }
      return (i % 2 ? a : b).plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    })
    const until = performance.now() + 600
    while (performance.now() < until) {
      expect(reader.afterSeq).toBeLessThan(heldSeq)
      await sleep(10)
    }
    await held.query('COMMIT')
    await Promise.all(writes)
    await reader.stop()

    const stored = await allChanges(a)
    expect(stored).toHaveLength(22)
    expect(reader.seen).toEqual(stored)
    expect(reader.seen).toContain(heldSeq)
  }, 30_000)
})
