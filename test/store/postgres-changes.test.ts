import pg from 'pg'
import { describe, expect, it, vi } from 'vitest'
import { inSchema } from '../../bench/postgres.js'
import { plantEvent, plantJson } from '../../src/plants/events.js'
import type { Plant } from '../../src/plants/model.js'
import { CHANGES_CHANNEL } from '../../src/store/postgres/change-watch.js'
import { loadMigrations, migrate } from '../../src/store/postgres/migrate.js'
import type { Actor, OutboxEvent } from '../../src/store/types.js'
import { admin } from '../helpers/postgres.js'
import { postgresKind, postgresStores } from '../helpers/stores.js'

const actor: Actor = { tokenId: 'tok_a' }

/** A plant event with its change's facts, as the domain builds it. */
function changeEvent(
  type: 'plant.created' | 'plant.updated' | 'plant.deleted',
  plant: Plant,
  at: Date,
  before?: Plant,
): OutboxEvent {
  return {
    ...plantEvent(type, plant, at),
    change: { plantId: plant.id, actor, requestId: `req-${type}`, before: before ? plantJson(before) : null },
  }
}

describe.skipIf(!postgresKind)('PostgreSQL change feed', () => {
  const { fresh, another } = postgresStores()

  it('records the plant of the events a database held before, exactly, and no actor', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    await admin(url, async (c) => {
      await migrate(
        c,
        loadMigrations().filter((m) => m.version < 20),
      )
      await c.query(`INSERT INTO events (type, payload, created_at, fanned_out_at) VALUES
        ('plant.created', '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":9223372036854775807,"name":"max"}}', to_timestamp(1), to_timestamp(1)),
        ('webhook.test', '{"type":"webhook.test","timestamp":"2026-01-01T00:00:00.000Z","data":{"webhookId":"wh_x"}}', to_timestamp(2), to_timestamp(2)),
        ('plant.created', '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":9007199254740993,"name":"odd"}}', to_timestamp(3), to_timestamp(3)),
        ('plant.updated', '{"type":"plant.updated","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":9007199254740993,"name":"even"}}', to_timestamp(4), to_timestamp(4)),
        ('plant.deleted', '{"type":"plant.deleted","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":-9223372036854775808,"name":"min"}}', to_timestamp(5), to_timestamp(5))`)
    })
    const store = await another(url)
    expect(store.migrated).toEqual(['020_change_facts', '021_stream_ticket_key'])
    const ids = await store.pool.query('SELECT seq::int, plant_id::text FROM events ORDER BY seq')
    expect(ids.rows).toEqual([
      { seq: 1, plant_id: '9223372036854775807' },
      { seq: 2, plant_id: null },
      { seq: 3, plant_id: '9007199254740993' },
      { seq: 4, plant_id: '9007199254740993' },
      { seq: 5, plant_id: '-9223372036854775808' },
    ])
    const history = await store.events.history(9007199254740993n, 10)
    expect(history.map((c) => [c.seq, c.type, c.actor, c.before, c.after])).toEqual([
      [4, 'plant.updated', null, null, '{"id":9007199254740993,"name":"even"}'],
      [3, 'plant.created', null, null, '{"id":9007199254740993,"name":"odd"}'],
    ])
    expect((await store.events.history(-9223372036854775808n, 10)).map((c) => [c.before, c.after])).toEqual([
      ['{"id":-9223372036854775808,"name":"min"}', null],
    ])
    // The webhook's test message is no change.
    const page = await store.events.changes({ afterSeq: 0, limit: 10 })
    expect(page.changes.map((c) => c.seq)).toEqual([1, 3, 4, 5])
    expect(page.lastSeq).toBe(5)
    expect(await store.events.retentionHorizon()).toBe(0)
  })

  it('starts the retention horizon below the oldest event an older database still holds', async () => {
    const older = async (deleted: string) => {
      const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
      await admin(url, async (c) => {
        await migrate(
          c,
          loadMigrations().filter((m) => m.version < 20),
        )
        await c.query(`INSERT INTO events (type, payload, created_at, fanned_out_at)
          SELECT 'plant.created', '{"type":"plant.created","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":' || x || ',"name":"p"}}',
            now(), now() FROM generate_series(1, 5) AS x`)
        await c.query(`DELETE FROM events WHERE ${deleted}`)
      })
      return (await another(url)).events.retentionHorizon()
    }
    expect(await older('false')).toBe(0)
    // Seq 4 is missing among those kept: it may never have committed, so it does not count.
    expect(await older('seq IN (1, 2, 4)')).toBe(2)
    expect(await older('true')).toBe(5)
  })

  it('stores every write path’s change facts, and an update’s plant as it was', async () => {
    const { store } = await fresh()
    const a = { id: 9223372036854775807n, name: 'a' }
    expect(await store.plants.create(a, { event: (at) => changeEvent('plant.created', a, at) })).toBe(
      'created',
    )
    const updated = await store.plants.update(
      a.id,
      { name: 'a2', tag: 't' },
      { event: (plant, at, before) => changeEvent('plant.updated', plant, at, before) },
    )
    expect(updated.outcome).toBe('done')
    await store.plants.createMany(
      [2n, 3n].map((id) => {
        const plant = { id, name: `p${id}` }
        return { plant, event: (at: Date) => changeEvent('plant.created', plant, at) }
      }),
    )
    await store.plants.removeMany([2n], {
      allowMissing: false,
      event: (plant, at) => changeEvent('plant.deleted', plant, at),
    })
    const imported = { id: 4n, name: 'imported' }
    await store.plants.importBatch([
      {
        plant: imported,
        event: (at) => ({
          ...plantEvent('plant.created', imported, at),
          change: { plantId: 4n, actor: { cli: 'import' }, requestId: null, before: null },
        }),
      },
    ])
    await store.plants.remove(a.id, { event: (plant, at) => changeEvent('plant.deleted', plant, at) })

    const { changes, lastSeq } = await store.events.changes({ afterSeq: 0, limit: 100 })
    expect(lastSeq).toBe(7)
    expect(changes.map((c) => [c.seq, c.type, c.actor, c.requestId, c.before, c.after])).toEqual([
      [1, 'plant.created', actor, 'req-plant.created', null, '{"id":9223372036854775807,"name":"a"}'],
      [
        2,
        'plant.updated',
        actor,
        'req-plant.updated',
        '{"id":9223372036854775807,"name":"a"}',
        '{"id":9223372036854775807,"name":"a2","tag":"t"}',
      ],
      [3, 'plant.created', actor, 'req-plant.created', null, '{"id":2,"name":"p2"}'],
      [4, 'plant.created', actor, 'req-plant.created', null, '{"id":3,"name":"p3"}'],
      [5, 'plant.deleted', actor, 'req-plant.deleted', '{"id":2,"name":"p2"}', null],
      [6, 'plant.created', { cli: 'import' }, null, null, '{"id":4,"name":"imported"}'],
      [
        7,
        'plant.deleted',
        actor,
        'req-plant.deleted',
        '{"id":9223372036854775807,"name":"a2","tag":"t"}',
        null,
      ],
    ])
    expect(changes.every((c) => c.time instanceof Date)).toBe(true)

    // A plant's history, newest first, paged by seq, and read after the plant is gone.
    const history = await store.events.history(a.id, 2)
    expect(history.map((c) => c.seq)).toEqual([7, 2])
    expect((await store.events.history(a.id, 2, 2)).map((c) => c.seq)).toEqual([1])
    expect(await store.events.history(99n, 2)).toEqual([])
  })

  it('resumes a filtered page past what it scanned, a full page at its last change', async () => {
    const { store } = await fresh()
    for (const id of [1n, 2n, 3n]) {
      const plant = { id, name: `p${id}` }
      await store.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    }
    await store.plants.remove(2n, { event: (plant, at) => changeEvent('plant.deleted', plant, at) })
    // Only deletes: the page is not full, so it resumes after everything it could see.
    const deletes = await store.events.changes({ afterSeq: 0, limit: 10, types: ['plant.deleted'] })
    expect(deletes.changes.map((c) => c.seq)).toEqual([4])
    expect(deletes.lastSeq).toBe(4)
    const creates = await store.events.changes({ afterSeq: 0, limit: 10, types: ['plant.created'] })
    expect(creates.changes.map((c) => c.seq)).toEqual([1, 2, 3])
    expect(creates.lastSeq).toBe(4)
    // A full page resumes at its last change, however far the table goes.
    const full = await store.events.changes({ afterSeq: 0, limit: 2 })
    expect(full.changes.map((c) => c.seq)).toEqual([1, 2])
    expect(full.lastSeq).toBe(2)
    // Nothing after: the page is empty and stays where it was asked; never below it.
    expect(await store.events.changes({ afterSeq: 4, limit: 10 })).toEqual({
      changes: [],
      lastSeq: 4,
      reachedEnd: true,
    })
    expect(await store.events.changes({ afterSeq: 40, limit: 10 })).toEqual({
      changes: [],
      lastSeq: 40,
      reachedEnd: true,
    })
    // A type that is no change's shows nothing.
    expect((await store.events.changes({ afterSeq: 0, limit: 10, types: ['webhook.test'] })).changes).toEqual(
      [],
    )
  })

  it('orders by seq as a number, past one digit', async () => {
    const { store } = await fresh()
    const plant = { id: 1n, name: 'v0' }
    await store.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    for (let i = 1; i <= 11; i++)
      await store.plants.update(
        1n,
        { name: `v${i}` },
        { event: (p, at, before) => changeEvent('plant.updated', p, at, before) },
      )
    const seqs = Array.from({ length: 12 }, (_, i) => i + 1)
    expect((await store.events.history(1n, 20)).map((c) => c.seq)).toEqual([...seqs].reverse())
    expect((await store.events.history(1n, 3, 11)).map((c) => c.seq)).toEqual([10, 9, 8])
    expect((await store.events.changes({ afterSeq: 0, limit: 11 })).changes.map((c) => c.seq)).toEqual(
      seqs.slice(0, 11),
    )
    expect((await store.events.changes({ afterSeq: 8, limit: 3 })).changes.map((c) => c.seq)).toEqual([
      9, 10, 11,
    ])
  })

  it('moves the retention horizon to the highest seq the sweep deleted, in its transaction', async () => {
    const { store } = await fresh()
    for (const id of [1n, 2n, 3n]) {
      const plant = { id, name: `p${id}` }
      await store.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    }
    await store.pool.query("UPDATE events SET created_at = now() - interval '2 days' WHERE seq <= 2")
    const now = new Date()
    const day = new Date(now.getTime() - 86_400_000)
    const swept = await store.maintenance.sweep({ now, eventsBefore: day, tokensBefore: day })
    expect(swept.events).toBe(2)
    expect(await store.events.retentionHorizon()).toBe(2)
    // A sweep that deletes nothing leaves it where it is.
    await store.maintenance.sweep({ now, eventsBefore: day, tokensBefore: day })
    expect(await store.events.retentionHorizon()).toBe(2)
    expect((await store.events.changes({ afterSeq: 0, limit: 10 })).changes.map((c) => c.seq)).toEqual([3])
  })

  it('wakes its watchers at once after its own commits, and another instance’s through NOTIFY', async () => {
    const { url, store } = await fresh()
    const other = await another(url)
    let here = 0
    let there = 0
    const stopHere = store.events.watchChanges(() => here++)
    const stopThere = other.events.watchChanges(() => there++)
    // Each instance listens once its LISTEN is through.
    await vi.waitFor(async () => expect(await listeners(url)).toBe(2))
    const [hereBefore, thereBefore] = [here, there]
    const plant = { id: 1n, name: 'p' }
    await store.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    expect(here).toBeGreaterThan(hereBefore)
    await vi.waitFor(() => expect(there).toBeGreaterThan(thereBefore), { timeout: 2000, interval: 10 })
    // The NOTIFY reaches the writing instance's own listener too, some time after its commit rang
    // it: counted from once it has, a ring below can only come from the write that changes nothing.
    await vi.waitFor(() => expect(here).toBeGreaterThanOrEqual(hereBefore + 2), {
      timeout: 2000,
      interval: 10,
    })

    // A write that changes nothing wakes nobody.
    const [h, t] = [here, there]
    await store.plants.update(
      1n,
      { name: 'p' },
      { event: (p, at, before) => changeEvent('plant.updated', p, at, before) },
    )
    expect(here).toBe(h)

    // A removed watcher is not woken; with none left the instance stops listening.
    stopThere()
    await vi.waitFor(async () => expect(await listeners(url)).toBe(1))
    await store.plants.remove(1n, { event: (p, at) => changeEvent('plant.deleted', p, at) })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(there).toBe(t)
    stopHere()
  })

  it('tells every watcher, and settles the write, when one watcher throws', async () => {
    const { store } = await fresh()
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    try {
      store.events.watchChanges(() => {
        throw new Error('a broken watcher')
      })
      const rung = vi.fn()
      store.events.watchChanges(rung)
      rung.mockClear()
      const plant = { id: 1n, name: 'a' }
      expect(
        await store.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) }),
      ).toBe('created')
      expect(rung).toHaveBeenCalled()
      expect(warned).toHaveBeenCalledWith(new Error('a broken watcher'))
      await store.close()
    } finally {
      warned.mockRestore()
    }
  })

  it('is not woken by the changes of a store in another schema of the same database', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    await admin(url, (c) => c.query('CREATE SCHEMA garden; CREATE SCHEMA nursery'))
    const garden = await another(inSchema(url, 'garden'))
    const nursery = await another(inSchema(url, 'nursery'))
    const nurseryTwin = await another(inSchema(url, 'nursery'))
    let twinRings = 0
    nurseryTwin.events.watchChanges(() => twinRings++)
    await vi.waitFor(async () => expect(await listeners(url)).toBe(1))
    const before = twinRings
    const plant = { id: 1n, name: 'p' }
    await garden.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(twinRings).toBe(before)
    await nursery.plants.create(plant, { event: (at) => changeEvent('plant.created', plant, at) })
    await vi.waitFor(() => expect(twinRings).toBeGreaterThan(before), { timeout: 2000, interval: 10 })
  })

  it('wakes its watchers when its listening connection is opened again, since notifications may have been missed', async () => {
    const { url, store } = await fresh({ revocationPollMs: 100 })
    let rings = 0
    store.events.watchChanges(() => rings++)
    await vi.waitFor(async () => expect(await listeners(url)).toBe(1))
    const before = rings
    const ended = await admin(url, (c) =>
      c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ~ 'LISTEN'`,
      ),
    )
    expect(ended.rowCount).toBe(1)
    await vi.waitFor(() => expect(rings).toBeGreaterThan(before), { timeout: 3000, interval: 20 })
    await vi.waitFor(async () => expect(await listeners(url)).toBe(1))
  })
})

/**
 * How many sessions of the database listen for changes. A session's LISTENs are its own to read
 * (pg_listening_channels); another session sees its last statement, which LISTENs on the channel
 * while the instance has a watcher (a LISTEN of its own, or the epoch's re-read) and not after (an
 * UNLISTEN, or the re-read without it).
 */
async function listeners(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const found = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid()
         AND query ~ $1`,
      [`(^|; )LISTEN ${CHANGES_CHANNEL}`],
    )
    return found.rows[0]?.n ?? 0
  } finally {
    await client.end()
  }
}
