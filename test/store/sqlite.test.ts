import {
  existsSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import { changePlant, createPlant, deletePlant } from '../../src/plants/service.js'
import { sweepOnce } from '../../src/retention.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import type { BatchRow } from '../../src/store/sqlite/batch.js'
import { explainOpenFailure, explainWriteFailure } from '../../src/store/sqlite/failures.js'
import { openSqlite, type SqliteStore } from '../../src/store/sqlite/index.js'
import { makeFolder } from '../../src/store/sqlite/make-folder.js'
import { loadMigrations, migrate } from '../../src/store/sqlite/migrate.js'
import { SqlitePlantStore } from '../../src/store/sqlite/plants.js'
import { type BatchSink, batchSink } from '../../src/store/sqlite/writer.js'
import { createWebhook } from '../../src/webhooks/service.js'
import { seenDuring } from '../helpers/event-loop.js'
import { createTaggedAndUntagged, tempDir } from '../helpers/stores.js'
import { subscriptionRecord } from '../helpers/webhooks.js'

/** A create of the writer's batch format, without an event or an idempotency record. */
function row(id: bigint, name: string, tag: string | null): BatchRow {
  return { kind: 'create', id, name, tag, event: undefined, idempotency: undefined }
}

/** A sink committing on the given connection, each COMMIT durable itself (as on `:memory:`). */
function inlineSink(db: Database.Database): BatchSink {
  return batchSink({ connect: () => ({ db, close: () => {} }), busyTimeoutMs: 5000, checkFile: () => {} })
}

/**
 * A sink as the store makes for a file: its own connection, without a busy timeout, committing with
 * synchronous=NORMAL and fsyncing `logPath` (the database's log unless a test gives another).
 */
function fileSink(path: string, busyTimeoutMs = 5000, logPath = `${path}-wal`): BatchSink {
  return batchSink({
    connect: () => {
      const db = new Database(path, { fileMustExist: true })
      try {
        db.pragma('busy_timeout = 0')
        db.pragma('synchronous = NORMAL')
      } catch (error) {
        db.close()
        throw error
      }
      return { db, close: () => db.close() }
    },
    busyTimeoutMs,
    checkFile: () => {},
    logPath,
  })
}

describe('SQLite store', () => {
  let store: SqliteStore
  afterEach(() => store?.close())

  it('serves from WAL mode with synchronous=FULL', () => {
    store = openSqlite({ path: join(tempDir(), 'p.db') })
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal')
    // 2 is FULL: every commit is fsynced before a create is acknowledged.
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2)
  })

  it('copies the log back in its checkpoint thread as creates commit, and truncates it on the periodic checkpoint', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const frame = 4096 + 24
    // Each create fills a page of its own: a batch of 50 appends at least 50 frames to the log. The
    // long text is the tag: a long name would also fill the search index, whose merges write more
    // the more it holds, so the second round below would write more than the first.
    const tag = 't'.repeat(3000)
    let next = 1n
    const write = async (batches: number) => {
      for (let b = 0; b < batches; b++)
        await Promise.all(
          Array.from({ length: 50 }, () => store.plants.create({ id: next++, name: 'n', tag })),
        )
    }
    await write(20)
    const first = statSync(`${path}-wal`).size
    expect(first).toBeGreaterThan(1000 * frame)
    // Once the thread has copied it back, the next commits write the log again from its start, and
    // the file (never shrunk by a rewind) stops growing.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    await write(20)
    expect(statSync(`${path}-wal`).size).toBeLessThan(first + 100 * frame)
    await store.maintenance.checkpoint()
    expect(statSync(`${path}-wal`).size).toBe(0)
    expect((await store.plants.list({ limit: 5000 })).length).toBe(2000)
  })

  it('makes a new database, its log files and its backups readable by their owner alone', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    store = openSqlite({ path })
    await createWebhook(store.webhooks, {
      url: 'https://example.com/hook',
      events: ['plant.created'],
      description: null,
    })
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.backup(join(dir, 'copy.db'))
    const mode = (file: string) => statSync(join(dir, file)).mode & 0o777
    for (const file of ['p.db', 'p.db-wal', 'p.db-shm', 'copy.db'])
      expect([file, mode(file)]).toEqual([file, 0o600])
    store.close()
    // A file given another mode by its owner keeps it.
    const shared = join(dir, 'shared.db')
    writeFileSync(shared, '', { mode: 0o640 })
    store = openSqlite({ path: shared })
    expect(mode('shared.db')).toBe(0o640)
  })

  // A file and `:memory:` must batch alike.
  const writers = [
    { name: 'a file', path: () => join(tempDir(), 'p.db') },
    { name: ':memory:', path: () => ':memory:' },
  ]

  describe.each(writers)('group commit on $name', ({ path }) => {
    /** Creates `faulty` between two others in one batch: all three must fail, and none be stored. */
    async function expectWholeBatchFailed(faulty: bigint, [before, after]: [bigint, bigint]) {
      const results = await Promise.allSettled([
        store.plants.create({ id: before, name: 'a' }),
        store.plants.create({ id: faulty, name: 'fault' }),
        store.plants.create({ id: after, name: 'b' }),
      ])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
      for (const id of [before, faulty, after]) expect(await store.plants.get(id)).toBeUndefined()
    }

    it('puts concurrent creates into one transaction, failing only the duplicate', async () => {
      const location = path()
      store = openSqlite({ path: location })
      const sink = location === ':memory:' ? inlineSink(store.db) : fileSink(location)
      const batches: number[] = []
      const plants = new SqlitePlantStore(store.db, {
        write: (batch, now) => {
          batches.push(batch.length)
          return sink.write(batch, now)
        },
        durable: () => sink.durable(),
        check: () => sink.check(),
        close: () => sink.close(),
      })
      const outcomes = await Promise.all([
        plants.create({ id: 1n, name: 'a' }),
        plants.create({ id: 2n, name: 'b' }),
        plants.create({ id: 1n, name: 'dup' }),
        plants.create({ id: 3n, name: 'c' }),
      ])
      expect(outcomes).toEqual(['created', 'created', 'exists', 'created'])
      expect(batches).toEqual([4])
      expect((await plants.get(1n))?.name).toBe('a')
      await plants.drain()
      await sink.close()
    })

    it('fails every request of a batch whose commit fails, and keeps none of its rows', async () => {
      store = openSqlite({ path: path() })
      // A deferred foreign key is checked at COMMIT: inserting id 666 makes the whole commit fail,
      // as a full disk or an I/O error would.
      store.db.exec(`
        CREATE TABLE fault_parent (id INTEGER PRIMARY KEY);
        CREATE TABLE fault_child (parent INTEGER REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TRIGGER fault AFTER INSERT ON plants WHEN NEW.id = 666
        BEGIN INSERT INTO fault_child (parent) VALUES (-1); END;`)
      await expectWholeBatchFailed(666n, [10n, 11n])
      // The writer recovered: the next batch commits.
      expect(await store.plants.create({ id: 12n, name: 'c' })).toBe('created')
      expect(store.db.inTransaction).toBe(false)
    })

    it('commits the updates and deletes of a turn with its creates, in the order they came', async () => {
      store = openSqlite({ path: path() })
      expect(await store.plants.create({ id: 1n, name: 'one', tag: 'x' })).toBe('created')
      const events: string[] = []
      const event = (type: string) => (plant: { id: bigint }) => {
        events.push(`${type} ${plant.id}`)
        return plantEvent(type === 'update' ? 'plant.updated' : 'plant.deleted', plant as never, new Date())
      }
      const [created, renamed, unchanged, stale, gone, missing] = await Promise.all([
        store.plants.create({ id: 2n, name: 'two' }),
        // Written after the create of the same turn, which it finds.
        store.plants.update(2n, { name: 'two!' }, { event: event('update') }),
        store.plants.update(1n, { name: 'one' }, { event: event('update') }),
        store.plants.update(1n, { tag: null }, { precondition: (_, version) => version === 7 }),
        store.plants.remove(1n, {
          precondition: (plant, version) => plant.tag === 'x' && version === 1,
          event: event('delete'),
        }),
        store.plants.update(1n, { name: 'too late' }),
      ])
      expect(created).toBe('created')
      expect(renamed).toEqual({ outcome: 'done', plant: { id: 2n, name: 'two!' }, version: 2 })
      // A change that changes nothing keeps the version and writes no event.
      expect(unchanged).toEqual({ outcome: 'done', plant: { id: 1n, name: 'one', tag: 'x' }, version: 1 })
      expect(stale).toEqual({ outcome: 'precondition-failed' })
      expect(gone).toEqual({ outcome: 'done', plant: { id: 1n, name: 'one', tag: 'x' }, version: 1 })
      expect(missing).toEqual({ outcome: 'missing' })
      expect(events).toEqual(['update 2', 'delete 1'])
      expect(await store.plants.read(2n)).toEqual({ plant: { id: 2n, name: 'two!' }, version: 2 })
      expect(await store.plants.get(1n)).toBeUndefined()
      const stored = store.db.prepare('SELECT type FROM events ORDER BY seq').pluck().all()
      expect(stored).toEqual(['plant.updated', 'plant.deleted'])
    })

    it('dates every event of a batch alike, so a re-create is never dated before the delete ahead of it', async () => {
      store = openSqlite({ path: path() })
      expect(await store.plants.create({ id: 1n, name: 'one' })).toBe('created')
      expect(await store.plants.create({ id: 2n, name: 'two' })).toBe('created')
      // A row ahead of the delete that takes a few milliseconds inside the transaction.
      const slow = () => {
        const until = Date.now() + 5
        while (Date.now() < until) {}
        return true
      }
      const recreated = { id: 1n, name: 'one again' }
      await Promise.all([
        store.plants.update(2n, { name: 'two!' }, { precondition: slow }),
        store.plants.remove(1n, { event: (plant, at) => plantEvent('plant.deleted', plant, at) }),
        store.plants.create(recreated, { event: (at) => plantEvent('plant.created', recreated, at) }),
      ])
      const events = store.db.prepare('SELECT type, created_at AS at FROM events ORDER BY seq').all()
      expect(events.map((e) => (e as { type: string }).type)).toEqual(['plant.deleted', 'plant.created'])
      const [deleted, created] = events as Array<{ at: number }>
      expect(created?.at).toBe(deleted?.at)
    })

    it('fails the updates and deletes of a batch whose commit fails, and keeps none of their changes', async () => {
      store = openSqlite({ path: path() })
      expect(await store.plants.create({ id: 1n, name: 'one' })).toBe('created')
      expect(await store.plants.create({ id: 2n, name: 'two' })).toBe('created')
      store.db.exec(`
        CREATE TABLE fault_parent (id INTEGER PRIMARY KEY);
        CREATE TABLE fault_child (parent INTEGER REFERENCES fault_parent (id) DEFERRABLE INITIALLY DEFERRED);
        CREATE TRIGGER fault AFTER INSERT ON plants WHEN NEW.id = 666
        BEGIN INSERT INTO fault_child (parent) VALUES (-1); END;`)
      const results = await Promise.allSettled([
        store.plants.update(1n, { name: 'renamed' }),
        store.plants.create({ id: 666n, name: 'fault' }),
        store.plants.remove(2n),
      ])
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
      expect(await store.plants.read(1n)).toEqual({ plant: { id: 1n, name: 'one' }, version: 1 })
      expect(await store.plants.get(2n)).toEqual({ id: 2n, name: 'two' })
      expect(await store.plants.remove(2n)).toMatchObject({ outcome: 'done' })
    })

    it('fails every request of a batch when an insert fails for a reason other than a duplicate', async () => {
      store = openSqlite({ path: path() })
      // Only a duplicate id is that request's own 409; any other failed insert (here a trigger's
      // abort, as an I/O error would be) fails the whole batch rather than being taken for one.
      store.db.exec(`CREATE TRIGGER fault BEFORE INSERT ON plants WHEN NEW.id = 667
        BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;`)
      await expectWholeBatchFailed(667n, [20n, 21n])
      expect(await store.plants.create({ id: 22n, name: 'c' })).toBe('created')
    })
  })

  it('tells the dispatcher once a batch that queued deliveries is durable, and never of one whose fsync failed', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    const opened = openSqlite({ path })
    store = opened
    await opened.webhooks.insert(
      subscriptionRecord('wh_told00000000000000000000', new Date(Date.now() - 1000)),
    )
    const at = new Date()
    const createAll = (plants: SqlitePlantStore, ids: bigint[]) =>
      Promise.all(
        ids.map((id) => {
          const plant = { id, name: `p${id}` }
          return plants.create(plant, { event: () => plantEvent('plant.created', plant, at) })
        }),
      )
    let told = 0
    const healthy = fileSink(path)
    const plants = new SqlitePlantStore(opened.db, healthy, () => told++)
    await createAll(plants, [1n, 2n, 3n])
    expect(told).toBe(1)
    await plants.drain()

    await healthy.close()

    // A batch whose fsync fails tells nothing: its events may never reach the disk.
    const failing = fileSink(path, 5000, join(dir, 'missing', 'p.db-wal'))
    const refused = new SqlitePlantStore(opened.db, failing, () => told++)
    await expect(createAll(refused, [4n])).rejects.toThrow(/durable/)
    expect(told).toBe(1)
    await refused.drain()
    await failing.close()
  })

  it('keeps the delivery counts /metrics shows equal to the deliveries table through every change', async () => {
    const opened = openSqlite({ path: ':memory:' })
    store = opened
    const counted = async () => (await opened.webhooks.queueStats()).deliveries
    const actual = () => {
      const byStatus: Record<string, number> = { pending: 0, succeeded: 0, failed: 0 }
      const rows = opened.db
        .prepare('SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status')
        .all() as Array<{ status: string; n: number }>
      for (const row of rows) byStatus[row.status] = row.n
      return byStatus
    }
    const at = new Date()
    for (const id of ['wh_counts0000000000000000a', 'wh_counts0000000000000000b']) {
      await store.webhooks.insert(subscriptionRecord(id, new Date(at.getTime() - 1000)))
    }
    for (let i = 1n; i <= 5n; i++) {
      const plant = { id: i, name: `p${i}` }
      await store.plants.create(plant, { event: () => plantEvent('plant.created', plant, at) })
    }
    expect(await counted()).toEqual({ pending: 10, succeeded: 0, failed: 0 })
    const claimed = await store.webhooks.claim({
      owner: 't',
      now: at,
      leaseMs: 60_000,
      limit: 3,
      perWebhook: 3,
      inFlight: new Map(),
    })
    const outcome = (i: number) => ({
      deliveryId: claimed[i]?.id as string,
      webhookId: claimed[i]?.webhookId as string,
      owner: 't',
      at,
      ok: i === 0,
      statusCode: i === 0 ? 200 : 500,
      error: null,
      durationMs: 3,
      body: null,
      bodyTruncated: false,
      nextAttemptAt: i === 2 ? new Date(at.getTime() + 1000) : null,
      disableIfFailingSince: new Date(0),
      failingContinuesSince: new Date(0),
    })
    await store.webhooks.complete([outcome(0), outcome(1), outcome(2)])
    expect(await counted()).toEqual(actual())
    expect(actual()).toEqual({ pending: 8, succeeded: 1, failed: 1 })
    // Finished deliveries past the retention go; the pending stay.
    const swept = await sweepOnce(
      store,
      { eventsRetentionMs: 1, tokensRetentionMs: 1, retentionIntervalMs: 0, walCheckpointIntervalMs: 0 },
      new Date(at.getTime() + 60_000),
    )
    expect(swept).toMatchObject({ webhook_deliveries: 2 })
    expect(await counted()).toEqual(actual())
    // A deleted subscription takes its deliveries with it.
    await store.webhooks.delete('wh_counts0000000000000000b')
    expect(await counted()).toEqual(actual())
    expect(actual().pending).toBeLessThan(8)
    expect(await counted()).toEqual(actual())
  })

  it('counts the deliveries a database held before it kept counts', async () => {
    const db = new Database(':memory:')
    const steps = loadMigrations()
    const counting = steps.findIndex((m) => m.name.includes('webhook_delivery_counts'))
    expect(counting).toBeGreaterThan(0)
    migrate(db, steps.slice(0, counting))
    db.exec(`INSERT INTO webhooks (id, url, events, secret, after_seq, created_at, updated_at)
               VALUES ('wh_1', 'https://r.example/', '["plant.created"]', 's', 0, 0, 0);
             INSERT INTO events (seq, id, type, payload, created_at) VALUES (1, 'e1', 'plant.created', '{}', 0), (2, 'e2', 'plant.created', '{}', 0);
             INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, created_at)
               VALUES ('d1', 'wh_1', 1, 'pending', 0), ('d2', 'wh_1', 2, 'succeeded', 0);`)
    migrate(db, steps)
    expect(db.prepare('SELECT status, n FROM webhook_delivery_counts ORDER BY status').all()).toEqual([
      { status: 'failed', n: 0 },
      { status: 'pending', n: 1 },
      { status: 'succeeded', n: 1 },
    ])
    db.close()
  })

  it('replays and deletes a subscription with thousands of deliveries in chunks, letting requests run between them', async () => {
    const opened = openSqlite({ path: ':memory:' })
    store = opened
    const at = Date.now()
    await opened.webhooks.insert(subscriptionRecord('wh_chunks00000000000000000', new Date(at - 1000)))
    const insert = opened.db.prepare(
      "INSERT INTO events (id, type, payload, created_at, fanned_out_at) VALUES (?, ?, '{}', ?, ?)",
    )
    opened.db.transaction(() => {
      // 100 events from before the replay's period, then 2,400 in it; one in ten of a type not subscribed.
      for (let i = 0; i < 2500; i++)
        insert.run(`e${i}`, i % 10 === 9 ? 'plant.deleted' : 'plant.created', i < 100 ? at - 60_000 : at, at)
    })()
    const deliveries = () =>
      opened.db.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get() as number
    const [queued, seenReplaying] = await seenDuring(
      () => opened.webhooks.replay('wh_chunks00000000000000000', new Date(at - 1), new Date(at)),
      deliveries,
    )
    expect(queued).toBe(2160)
    // A request between two chunks finds the replay part queued.
    expect(seenReplaying.some((n) => n > 0 && n < 2160)).toBe(true)
    const seqs = opened.db
      .prepare('SELECT event_seq FROM webhook_deliveries ORDER BY event_seq')
      .pluck()
      .all()
    const wanted = opened.db
      .prepare("SELECT seq FROM events WHERE created_at >= ? AND type = 'plant.created' ORDER BY seq")
      .pluck()
      .all(at)
    expect(seqs).toEqual(wanted)
    // Again: every one queued anew, none twice.
    expect(await opened.webhooks.replay('wh_chunks00000000000000000', new Date(at - 1), new Date(at))).toBe(
      2160,
    )
    expect(opened.db.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get()).toBe(2160)

    const [deleted, seenDeleting] = await seenDuring(
      () => opened.webhooks.delete('wh_chunks00000000000000000'),
      deliveries,
    )
    expect(deleted).toBe(true)
    expect(seenDeleting.some((n) => n > 0 && n < 2160)).toBe(true)
    expect(opened.db.prepare('SELECT count(*) FROM webhook_deliveries').pluck().get()).toBe(0)
    expect((await opened.webhooks.queueStats()).deliveries).toEqual({ pending: 0, succeeded: 0, failed: 0 })
    expect(await opened.webhooks.delete('wh_chunks00000000000000000')).toBe(false)
  })

  it('writes batches that queued behind a held lock in one transaction, each answered with its own outcomes', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const other = new Database(path)
    const sink = fileSink(path)
    try {
      // The first batch waits for the lock; the others queue behind it and are taken together.
      other.exec('BEGIN IMMEDIATE')
      const first = sink.write([row(1n, 'a', null)], Date.now())
      await new Promise((resolve) => setTimeout(resolve, 20))
      const second = sink.write([row(2n, 'b', null), row(1n, 'again', null)], 1000)
      const third = sink.write([row(3n, 'c', 'x')], 2000)
      setTimeout(() => other.exec('COMMIT'), 30)
      expect(await first).toEqual({ outcomes: ['created'], queued: false, changed: false })
      expect(await second).toEqual({ outcomes: ['created', 'exists'], queued: false, changed: false })
      expect(await third).toEqual({ outcomes: ['created'], queued: false, changed: false })
      // One transaction stamps its rows with one time: the third batch's row carries an earlier batch's.
      const stamps = store.db.prepare('SELECT created_at FROM plants WHERE id > 1 ORDER BY id').pluck().all()
      expect(stamps).toHaveLength(2)
      expect(stamps[1]).toBe(stamps[0])
      expect(stamps[1]).not.toBe(2000)
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK')
      other.close()
      await sink.close()
    }
  })

  it('waits for the write lock another connection holds, up to the busy timeout', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const other = new Database(path)
    const patient = fileSink(path, 5000)
    const impatient = fileSink(path, 20)
    try {
      const plants = new SqlitePlantStore(store.db, patient)
      other.exec('BEGIN IMMEDIATE')
      const waiting = plants.create({ id: 1n, name: 'a' })
      setTimeout(() => other.exec('COMMIT'), 50)
      expect(await waiting).toBe('created')

      const refused = new SqlitePlantStore(store.db, impatient)
      other.exec('BEGIN IMMEDIATE')
      await expect(refused.create({ id: 2n, name: 'b' })).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
      other.exec('COMMIT')
      expect(await refused.create({ id: 3n, name: 'c' })).toBe('created')
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK')
      other.close()
      await patient.close()
      await impatient.close()
    }
  })

  it('answers a read that sees a committed write only once that write is durable', async () => {
    store = openSqlite({ path: ':memory:' })
    const inline = inlineSink(store.db)
    // Commits at once, as the file sink does, and holds durability until the test releases it.
    let release: (() => void) | undefined
    let held: Promise<void> | undefined
    const plants = new SqlitePlantStore(store.db, {
      write: async (batch, now) => {
        const result = await inline.write(batch, now)
        held = new Promise<void>((resolve) => {
          release = resolve
        })
        await held
        held = undefined
        return result
      },
      durable: () => held,
      check: () => inline.check(),
      close: () => inline.close(),
    })
    const answered: string[] = []
    const created = plants.create({ id: 5n, name: 'fresh', tag: 't' }).then(() => answered.push('create'))
    await vi.waitFor(() => expect(release).toBeDefined())
    // The row is committed and visible to the main connection, not yet durable.
    expect(store.db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(1)
    const reads = [
      plants.read(5n).then(() => answered.push('read')),
      plants.list({ limit: 10 }).then(() => answered.push('first page')),
      plants.list({ limit: 10, tags: ['t'] }).then(() => answered.push('tag page')),
      plants.list({ limit: 10, text: 'fre' }).then(() => answered.push('search page')),
      plants.count({ tags: ['t'] }).then(() => answered.push('count')),
      plants.list({ limit: 10, after: { id: 1n } }).then(() => answered.push('later page')),
      plants.get(5n).then(() => answered.push('get')),
    ]
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(answered).toEqual([])
    release?.()
    await Promise.all([created, ...reads])
    expect(answered.sort()).toEqual([
      'count',
      'create',
      'first page',
      'get',
      'later page',
      'read',
      'search page',
      'tag page',
    ])
    // Nothing awaits an fsync now: a read is answered without waiting.
    expect((await plants.read(5n))?.plant.name).toBe('fresh')
    await plants.drain()
  })

  it('says when everything committed is durable, and fails reads for good once an fsync failed', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    store = openSqlite({ path })
    const healthy = fileSink(path)
    expect(healthy.durable()).toBeUndefined()
    const written = healthy.write([row(1n, 'a', null)], Date.now())
    await vi.waitFor(() => expect(store?.db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(1))
    const durable = healthy.durable()
    expect(durable).toBeInstanceOf(Promise)
    let answered = false
    void written.then(() => {
      answered = true
    })
    await durable
    expect(answered).toBe(true)
    expect(healthy.durable()).toBeUndefined()
    await healthy.close()

    const sink = fileSink(path, 5000, join(dir, 'missing', 'p.db-wal'))
    const failing = new SqlitePlantStore(store.db, sink)
    const write = failing.create({ id: 2n, name: 'b' })
    const read = (async () => {
      // Committed, its fsync not yet answered.
      await vi.waitFor(() => expect(store?.db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(2))
      return failing.read(2n)
    })()
    await expect(write).rejects.toThrow(/durable/)
    // The read, which sees the create's row, is refused as the create was, and so is every later one.
    await expect(read).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(failing.read(1n)).rejects.toThrow(/durable/)
    await expect(failing.list({ limit: 10 })).rejects.toThrow(/durable/)
    await failing.drain()
    await sink.close()
  })

  /** A store on a new file and a sink beside it; the sink is closed once `use` is done. */
  async function withFileSink(use: (sink: BatchSink, path: string) => Promise<void>): Promise<void> {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const sink = fileSink(path)
    try {
      await use(sink, path)
    } finally {
      await sink.close()
    }
  }

  /** Descriptors this process holds on the database file itself: one per connection. */
  const connectionsTo = (path: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path
      } catch {
        return false
      }
    }).length

  it('opens its own connection only when the first batch comes', async () => {
    await withFileSink(async (sink, path) => {
      const before = connectionsTo(path)
      await sink.write([row(1n, 'a', null)], Date.now())
      expect(connectionsTo(path)).toBe(before + 1)
    })
  })

  it('closes each connection it could not prepare while the database was locked, and then writes', async () => {
    await withFileSink(async (sink, path) => {
      // Only a process alone on the file can take it in exclusive locking mode; the sink has not
      // connected yet.
      store.db.close()
      const holder = new Database(path)
      holder.pragma('locking_mode = EXCLUSIVE')
      holder.exec('BEGIN EXCLUSIVE')
      const written = sink.write([row(1n, 'a', null)], Date.now())
      // Several attempts meet the lock meanwhile, each with a connection of its own. (SQLite keeps
      // a closed connection's descriptor until the holder's locks in this process are gone.)
      await new Promise((resolve) => setTimeout(resolve, 100))
      holder.exec('COMMIT')
      holder.close()
      expect((await written).outcomes).toEqual(['created'])
      expect(connectionsTo(path)).toBe(1)
    })
  })

  it('sees a revocation by another process after its creates, reading the epoch only when another connection committed', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    await store.plants.create({ id: 1n, name: 'a' })
    const epoch = store.tokens.revocationEpoch()
    const statement = Object.getPrototypeOf(store.db.prepare('SELECT 1')) as Database.Statement
    const get = vi.spyOn(statement, 'get')
    const epochReads = () =>
      get.mock.contexts.filter((s) => (s as Database.Statement).source.includes('token_epoch'))
    try {
      for (let i = 2n; i < 5n; i++) await store.plants.create({ id: i, name: 'b' })
      // The creates were committed on the connection the epoch is watched from: no read.
      expect(store.tokens.revocationEpoch()).toBe(epoch)
      expect(store.tokens.revocationEpoch()).toBe(epoch)
      expect(epochReads()).toHaveLength(0)

      const other = new Database(path)
      try {
        other.prepare("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'").run()
      } finally {
        other.close()
      }
      expect(store.tokens.revocationEpoch()).toBe(epoch + 1)
      expect(epochReads()).toHaveLength(1)
    } finally {
      get.mockRestore()
    }
  })

  it('answers a batch only once its log is on disk, and stops writing for good if that fails', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    store = openSqlite({ path })
    const healthy = fileSink(path)
    const plants = new SqlitePlantStore(store.db, healthy)
    expect(await plants.create({ id: 1n, name: 'a' })).toBe('created')
    await healthy.close()
    // A writer whose fsync cannot succeed: the commit happens, the answer must not.
    const sink = fileSink(path, 5000, join(dir, 'missing', 'p.db-wal'))
    const failing = new SqlitePlantStore(store.db, sink)
    // Unavailable, not a bug: the HTTP layer answers 503 with Retry-After.
    await expect(failing.create({ id: 2n, name: 'b' })).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(failing.create({ id: 2n, name: 'b' })).rejects.toThrow(/durable/)
    // Fail-stop: after a failed fsync the page cache cannot be trusted, so nothing more is accepted.
    await expect(failing.create({ id: 3n, name: 'c' })).rejects.toThrow(/durable/)
    // An update or a delete is answered on the same terms as a create.
    await expect(failing.update(1n, { name: 'renamed' })).rejects.toThrow(/durable/)
    await expect(failing.remove(1n)).rejects.toThrow(/durable/)
    // Readiness asks the sink, so /readyz answers 503 from then on.
    expect(() => healthy.check()).not.toThrow()
    expect(() => sink.check()).toThrow(StoreUnavailableError)
    await failing.drain()
    await sink.close()
  })

  it('watches the log beside the file that a symbolic link given as its path leads to', async () => {
    const dir = tempDir()
    const link = join(dir, 'p.db')
    const file = join(dir, 'volume.db')
    symlinkSync(file, link)
    store = openSqlite({ path: link })
    // SQLite writes its log as volume.db-wal, none beside the link.
    expect(await store.plants.create({ id: 1n, name: 'a' })).toBe('created')
    expect(existsSync(`${file}-wal`)).toBe(true)
    // And it is that log whose deletion is noticed.
    rmSync(`${file}-wal`)
    await expect(store.plants.create({ id: 0n, name: 'z' })).rejects.toThrow(
      /write-ahead log .*volume\.db-wal was moved or deleted/,
    )
  })

  it('checkpoints a database file moved away into that file, making none at its path', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    expect(await store.plants.create({ id: 1n, name: 'a' })).toBe('created')
    renameSync(path, `${path}.moved`)
    await expect(store.plants.create({ id: 2n, name: 'b' })).rejects.toThrow(
      /p\.db was moved or deleted while open/,
    )
    await store.maintenance.checkpoint()
    expect(existsSync(path)).toBe(false)
    // Put back, it is the file opened: writes resume.
    renameSync(`${path}.moved`, path)
    expect(await store.plants.create({ id: 2n, name: 'b' })).toBe('created')
    expect((await store.plants.list({ limit: 10 })).map((p) => p.plant.id)).toEqual([1n, 2n])
  })

  it('writes a plant.created event with the plant in its transaction, and none for a duplicate', async () => {
    store = openSqlite({ path: ':memory:' })
    await createPlant(store.plants, { id: 9223372036854775807n, name: 'big', tag: 't' })
    await expect(createPlant(store.plants, { id: 9223372036854775807n, name: 'again' })).rejects.toThrow(
      /exists/,
    )
    const events = await store.events.listSince(0, 10)
    expect(events).toHaveLength(1)
    const envelope = events[0]?.payload ?? ''
    expect(envelope).toContain('"data":{"id":9223372036854775807,"name":"big","tag":"t"}')
    expect(JSON.parse(envelope)).toMatchObject({ type: 'plant.created', timestamp: expect.any(String) })
  })

  it.each(writers)(
    'fans each event out in the transaction that writes it, on $name: deliveries exist when it is answered',
    async ({ path }) => {
      store = openSqlite({ path: path() })
      const hook = (events: Array<'plant.created' | 'plant.updated' | 'plant.deleted'>) =>
        createWebhook(store.webhooks, { url: 'https://r.example/', events, description: null })
      const all = await hook(['plant.created', 'plant.updated', 'plant.deleted'])
      const deletes = await hook(['plant.deleted'])
      const off = await hook(['plant.created'])
      await store.webhooks.update(off.id, {
        disabledAt: new Date(),
        disabledReason: 'manual',
        updatedAt: new Date(),
      })
      await Promise.all([
        createPlant(store.plants, { id: 1n, name: 'a' }),
        createPlant(store.plants, { id: 2n, name: 'b' }),
        createPlant(store.plants, { id: 1n, name: 'dup' }).catch(() => undefined),
      ])
      const late = await hook(['plant.created', 'plant.updated'])
      await changePlant(store.plants, 1n, { name: 'a2' }, undefined)
      await deletePlant(store.plants, 2n, undefined)
      await store.plants.importBatch([
        {
          plant: { id: 3n, name: 'c' },
          event: (at) => plantEvent('plant.created', { id: 3n, name: 'c' }, at),
        },
      ])
      const types = async (id: string) =>
        (await store.webhooks.listDeliveries(id, { limit: 10 })).map((d) => d.eventType).sort()
      // Without any dispatcher pass: nothing was left awaiting fan-out.
      expect((await store.webhooks.queueStats()).awaitingFanOut).toBe(0)
      expect(await types(all.id)).toEqual([
        'plant.created',
        'plant.created',
        'plant.created',
        'plant.deleted',
        'plant.updated',
      ])
      expect(await types(deletes.id)).toEqual(['plant.deleted'])
      expect(await types(off.id)).toEqual([])
      expect(await types(late.id)).toEqual(['plant.created', 'plant.updated'])
      expect(await store.webhooks.fanOut(100, new Date())).toBe(0)
    },
  )

  it.each(writers)(
    'wakes the dispatcher only after a commit that queued a delivery, on $name',
    async ({ path }) => {
      store = openSqlite({ path: path() })
      let told = 0
      store.events.watch(() => told++)
      await createPlant(store.plants, { id: 1n, name: 'a' })
      await changePlant(store.plants, 1n, { name: 'b' }, undefined)
      expect(told).toBe(0)
      await createWebhook(store.webhooks, {
        url: 'https://r.example/',
        events: ['plant.created'],
        description: null,
      })
      await createPlant(store.plants, { id: 2n, name: 'c' })
      expect(told).toBe(1)
      // Nobody subscribed to updates: the event is stored, and there is nothing to send.
      await changePlant(store.plants, 2n, { name: 'd' }, undefined)
      expect(told).toBe(1)
      await store.plants.importBatch([
        {
          plant: { id: 3n, name: 'e' },
          event: (at) => plantEvent('plant.created', { id: 3n, name: 'e' }, at),
        },
      ])
      expect(told).toBe(2)
    },
  )

  it('names each event by its time and seq, storing one integer-keyed row and no index entry for it', async () => {
    store = openSqlite({ path: ':memory:' })
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => createPlant(store.plants, { id: BigInt(i), name: `p${i}` })),
    )
    await new Promise((resolve) => setTimeout(resolve, 5))
    await createPlant(store.plants, { id: 1000n, name: 'later' })
    const events = await store.events.listSince(0, 500)
    expect(events).toHaveLength(201)
    for (const e of events) {
      const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')
      expect(e.id).toBe(`msg_${hex(e.occurredAt.getTime(), 12)}${hex(e.seq, 14)}`)
    }
    // Of the form ids always had, and the last event, created later, sorts after every earlier one.
    const ids = events.map((e) => e.id)
    expect(ids.every((id) => /^msg_[0-9a-f]{12}[A-Za-z0-9_-]{14}$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(201)
    expect(ids.slice(0, 200).every((id) => id < (ids[200] as string))).toBe(true)
    // No id is stored, and of the outbox's indexes the one of events awaiting fan-out holds none of
    // them; the other is the plants' history, one entry per change, keyed by plant and seq.
    expect(store.db.prepare('SELECT count(*) FROM events WHERE id IS NOT NULL').pluck().get()).toBe(0)
    const indexes = store.db.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' ORDER BY name",
    )
    expect(indexes.pluck().all()).toEqual(['events_awaiting_fan_out', 'events_by_plant'])
    const entries = store.db.prepare(
      'SELECT count(*) FROM events INDEXED BY events_awaiting_fan_out WHERE fanned_out_at IS NULL',
    )
    expect(entries.pluck().get()).toBe(0)
  })

  it('replays by time through the events in seq order, without an index of their times', async () => {
    store = openSqlite({ path: ':memory:' })
    await store.webhooks.insert(subscriptionRecord('wh_1', new Date(0)))
    // Dated in seq order but for the third, dated a little before the second (a clock stepping back).
    const dates = [1_000, 50_000, 49_500, 60_000, 70_000]
    const insert = store.db.prepare(
      "INSERT INTO events (type, payload, created_at, fanned_out_at) VALUES ('plant.created', '{}', ?, ?)",
    )
    for (const at of dates) insert.run(at, at)
    const replayed = async (since: number) => {
      await store.webhooks.replay('wh_1', new Date(since), new Date(100_000))
      const deliveries = await store.webhooks.listDeliveries('wh_1', { limit: 10 })
      store.db.exec('DELETE FROM webhook_deliveries')
      return deliveries.map((d) => d.eventSeq).sort((a, b) => a - b)
    }
    expect(await replayed(0)).toEqual([1, 2, 3, 4, 5])
    expect(await replayed(49_000)).toEqual([2, 3, 4, 5])
    expect(await replayed(49_800)).toEqual([2, 4, 5])
    expect(await replayed(60_000)).toEqual([4, 5])
    expect(await replayed(70_001)).toEqual([])
    // The sweep deletes what is older than its cutoff, the out-of-order one too.
    const sweep = await store.maintenance.sweep({
      now: new Date(100_000),
      eventsBefore: new Date(55_000),
      tokensBefore: new Date(0),
    })
    expect(sweep.events).toBe(3)
    expect(store.db.prepare('SELECT seq FROM events ORDER BY seq').pluck().all()).toEqual([4, 5])
  })

  it('keeps the ids, seqs and deliveries of the events an older database holds when it drops their unique index', async () => {
    const path = join(tempDir(), 'older-events.db')
    const db = new Database(path)
    const steps = loadMigrations()
    const lean = steps.findIndex((m) => m.name === '016_lean_outbox')
    expect(lean).toBeGreaterThan(0)
    migrate(db, steps.slice(0, lean))
    db.exec(`INSERT INTO webhooks (id, url, events, secret, after_seq, created_at, updated_at)
               VALUES ('wh_1', 'https://r.example/', 'plant.created', 's', 0, 0, 0);
             INSERT INTO events (id, type, payload, created_at, fanned_out_at)
               VALUES ('msg_old1', 'plant.created', '{}', 1000, 1000), ('msg_old2', 'plant.created', '{}', 2000, 2000),
                      ('msg_old3', 'plant.created', '{}', 3000, 3000), ('msg_wait', 'plant.created', '{}', 4000, NULL);
             INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, created_at)
               VALUES ('dlv_old', 'wh_1', 2, 'succeeded', 2000);
             DELETE FROM events WHERE seq = 3;`)
    db.close()

    store = openSqlite({ path })
    expect(store.migrated).toEqual(steps.slice(lean).map((m) => m.name))
    expect((await store.events.listSince(0, 10)).map((e) => [e.seq, e.id])).toEqual([
      [1, 'msg_old1'],
      [2, 'msg_old2'],
      [4, 'msg_wait'],
    ])
    expect((await store.webhooks.listDeliveries('wh_1', { limit: 10 })).map((d) => d.eventId)).toEqual([
      'msg_old2',
    ])
    // An event an earlier version left waiting is still fanned out.
    expect(await store.webhooks.fanOut(100, new Date())).toBe(1)
    // No seq is handed out twice, not even that of an event deleted since; the foreign keys still hold.
    await createPlant(store.plants, { id: 1n, name: 'a' })
    const [created] = await store.events.listSince(4, 10)
    expect(created?.seq).toBe(5)
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1)
    expect(() =>
      store.db.exec(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, created_at)
                     VALUES ('dlv_none', 'wh_1', 99, 'pending', 0)`),
    ).toThrow(/FOREIGN KEY/)
  })

  it('keeps the history of the plant changes an older database holds, and starts its horizon at the highest seq it lost', async () => {
    const steps = loadMigrations()
    const facts = steps.findIndex((m) => m.name === '019_change_facts')
    expect(facts).toBeGreaterThan(0)
    /** A database as the version before left it, holding these events (seq 1, 2, …), then `lose` run. */
    const older = (payloads: Array<[string, string]>, lose: string) => {
      const path = join(tempDir(), 'older-changes.db')
      const db = new Database(path)
      migrate(db, steps.slice(0, facts))
      const insert = db.prepare(
        'INSERT INTO events (type, payload, created_at, fanned_out_at) VALUES (?, ?, ?, ?)',
      )
      for (const [i, [type, payload]] of payloads.entries()) insert.run(type, payload, 1000 * (i + 1), 1000)
      db.exec(lose)
      db.close()
      return path
    }
    const envelope = (type: string, data: string) => `{"type":"${type}","timestamp":"t","data":${data}}`
    const big = '{"id":9223372036854775807,"name":"a"}'
    const path = older(
      [
        ['plant.created', envelope('plant.created', big)],
        ['plant.created', envelope('plant.created', '{"id":1,"name":"gone"}')],
        ['plant.updated', envelope('plant.updated', '{"id":9223372036854775807,"name":"b"}')],
        ['webhook.test', envelope('webhook.test', '{"id":9223372036854775807}')],
        ['plant.created', '{}'],
        ['plant.deleted', envelope('plant.deleted', '{"id":-9223372036854775808,"name":"c","tag":"t"}')],
      ],
      'DELETE FROM events WHERE seq = 2',
    )
    store = openSqlite({ path })
    expect(store.migrated).toEqual(steps.slice(facts).map((m) => m.name))
    const plantIds = store.db.prepare('SELECT seq, plant_id FROM events ORDER BY seq').safeIntegers(true)
    expect(plantIds.all()).toEqual([
      { seq: 1n, plant_id: 9223372036854775807n },
      { seq: 3n, plant_id: 9223372036854775807n },
      { seq: 4n, plant_id: null },
      { seq: 5n, plant_id: null },
      { seq: 6n, plant_id: -9223372036854775808n },
    ])
    // Stored before changes recorded who made them: no actor, no request, and an update's plant
    // before it unknown.
    expect(await store.events.history(9223372036854775807n, 10)).toEqual([
      {
        seq: 3,
        type: 'plant.updated',
        time: new Date(3000),
        actor: null,
        requestId: null,
        before: null,
        after: '{"id":9223372036854775807,"name":"b"}',
      },
      expect.objectContaining({ seq: 1, before: null, after: big }),
    ])
    expect(await store.events.history(-9223372036854775808n, 10)).toEqual([
      expect.objectContaining({
        seq: 6,
        before: '{"id":-9223372036854775808,"name":"c","tag":"t"}',
        after: null,
      }),
    ])
    // The feed holds them all but the test message; one whose payload has no data shows no plant.
    const feed = await store.events.changes({ afterSeq: 0, limit: 10 })
    expect(feed.changes.map((c) => [c.seq, c.after])).toEqual([
      [1, big],
      [3, '{"id":9223372036854775807,"name":"b"}'],
      [5, null],
      [6, null],
    ])
    expect(feed.lastSeq).toBe(6)
    // Seq 2 is gone: a reader resuming below it may have missed it.
    expect(await store.events.retentionHorizon()).toBe(2)
    await store.close()

    // Those deleted last leave no gap among the events kept: the last seq handed out names them.
    store = openSqlite({
      path: older(
        [
          ['plant.created', envelope('plant.created', big)],
          ['plant.deleted', envelope('plant.deleted', big)],
          ['plant.created', envelope('plant.created', big)],
        ],
        'DELETE FROM events WHERE seq > 1',
      ),
    })
    expect(await store.events.retentionHorizon()).toBe(3)
    await store.close()
    store = openSqlite({ path: older([['plant.created', envelope('plant.created', big)]], '') })
    expect(await store.events.retentionHorizon()).toBe(0)
  })

  it('lets queue transactions wait for a held write lock without blocking the thread', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const dispatcherSide = openSqlite({ path, busyTimeoutMs: 0 })
    try {
      await createPlant(store.plants, { id: 1n, name: 'a' })
      await createWebhook(store.webhooks, {
        url: 'https://r.example/',
        events: ['plant.created'],
        description: null,
      })
      // Events not yet fanned out: as an earlier version, which left fan-out to the dispatcher, wrote them.
      store.db.exec(`INSERT INTO events (id, type, payload, created_at)
        VALUES ('msg_a', 'plant.created', '{}', 1), ('msg_b', 'plant.created', '{}', 2)`)
      store.db.exec('BEGIN IMMEDIATE')
      const fanned = dispatcherSide.webhooks.fanOut(100, new Date())
      // The event loop still turns while the lock is held: the commit below runs before fanOut ends.
      await new Promise((resolve) => setTimeout(resolve, 30))
      store.db.exec('COMMIT')
      expect(await fanned).toBe(2)
    } finally {
      await dispatcherSide.close()
    }
  })

  it('reads the point reads of a turn together, in a snapshot taken once the turn has asked them all', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    await createPlant(store.plants, { id: 1n, name: 'a', tag: 'x' })
    const other = new Database(path)
    try {
      const transactions = vi.spyOn(store.db, 'transaction')
      // Asked before another connection commits in the same turn: the reads still see that commit,
      // since the snapshot is taken at the end of the turn, after every request of it has arrived.
      const reads = [store.plants.read(1n), store.plants.read(2n), store.plants.read(3n)]
      other
        .prepare(
          "INSERT INTO plants (id, name, name_folded, tag, created_at, updated_at) VALUES (2, 'b', 'b', NULL, 0, 0)",
        )
        .run()
      expect(await Promise.all(reads)).toEqual([
        { plant: { id: 1n, name: 'a', tag: 'x' }, version: 1 },
        { plant: { id: 2n, name: 'b' }, version: 1 },
        undefined,
      ])
      // Three reads, one transaction; a read alone in its turn needs none.
      expect(transactions).toHaveBeenCalledTimes(1)
      expect(await store.plants.read(2n)).toEqual({ plant: { id: 2n, name: 'b' }, version: 1 })
      expect(transactions).toHaveBeenCalledTimes(1)
      // A change made after a turn's reads were answered shows in the next turn's.
      other.prepare("UPDATE plants SET name = 'c', version = 2 WHERE id = 2").run()
      expect(await Promise.all([store.plants.read(2n), store.plants.read(1n)])).toEqual([
        { plant: { id: 2n, name: 'c' }, version: 2 },
        { plant: { id: 1n, name: 'a', tag: 'x' }, version: 1 },
      ])
    } finally {
      other.close()
    }
  })

  it('fails every point read of a turn whose reading fails, and answers the reads asked before a close', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    await createPlant(store.plants, { id: 1n, name: 'a' })
    const broken = new Error('disk I/O error')
    const transactions = vi.spyOn(store.db, 'transaction').mockImplementationOnce(() => {
      throw broken
    })
    const failed = await Promise.allSettled([store.plants.read(1n), store.plants.read(2n)])
    expect(failed).toEqual([
      { status: 'rejected', reason: broken },
      { status: 'rejected', reason: broken },
    ])
    transactions.mockRestore()
    // Closing waits for the reads already asked instead of closing the connection under them.
    const pending = [store.plants.read(1n), store.plants.read(1n)]
    await store.close()
    expect(await Promise.all(pending)).toEqual([
      { plant: { id: 1n, name: 'a' }, version: 1 },
      { plant: { id: 1n, name: 'a' }, version: 1 },
    ])
    // Open again for the closing afterEach.
    store = openSqlite({ path })
  })

  it('migrates once, however many times it is opened', async () => {
    const path = join(tempDir(), 'p.db')
    openSqlite({ path }).db.close()
    store = openSqlite({ path })
    expect(store.db.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBeGreaterThan(0)
    const versions = store.db.prepare('SELECT version FROM schema_migrations').pluck().all()
    expect(new Set(versions).size).toBe(versions.length)
  })

  it('keeps only tagged plants in the tag index, which listing by tag walks, and moves an older database to it', async () => {
    const path = join(tempDir(), 'tags.db')
    /** The tag index's entries, counted on its pages. */
    const indexEntries = (db: Database.Database) =>
      db
        .prepare("SELECT sum(ncell) FROM dbstat WHERE name = 'plants_tag_id' AND pagetype = 'leaf'")
        .pluck()
        .get()
    store = openSqlite({ path })
    await createTaggedAndUntagged(store.plants)
    expect(indexEntries(store.db)).toBe(3)
    const plan = store.db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT id, name, tag FROM plants WHERE tag = ? AND id >= ? ORDER BY id LIMIT ?',
      )
      .all('fern', 0, 10) as { detail: string }[]
    expect(plan.map((step) => step.detail).join('\n')).toMatch(/USING INDEX plants_tag_id/)
    expect(await store.plants.list({ tags: ['fern'], limit: 10 })).toEqual([
      { plant: { id: 3n, name: 'p3', tag: 'fern' } },
      { plant: { id: 5n, name: 'p5', tag: 'fern' } },
    ])
    store.close()

    // A database migrated before the index was partial has every plant in it until it is migrated.
    const older = new Database(path)
    older.exec(
      'DROP INDEX plants_tag_id; CREATE INDEX plants_tag_id ON plants (tag, id); DELETE FROM schema_migrations WHERE version = 9',
    )
    expect(indexEntries(older)).toBe(5)
    older.close()
    store = openSqlite({ path })
    expect(store.migrated).toEqual(['009_tagged_plants_index'])
    expect(indexEntries(store.db)).toBe(3)
    expect(await store.plants.list({ tags: ['aroid'], limit: 10 })).toEqual([
      { plant: { id: 2n, name: 'p2', tag: 'aroid' } },
    ])
  })

  it('numbers the subscriptions of an older database, whose deliveries keep their random ids', async () => {
    const path = join(tempDir(), 'hooks.db')
    store = openSqlite({ path })
    await store.webhooks.insert(subscriptionRecord('wh_a', new Date()))
    await store.webhooks.insert(subscriptionRecord('wh_b', new Date()))
    await createPlant(store.plants, { id: 1n, name: 'a' })
    store.close()

    // As migration 011 left it: no numbers, random delivery ids, the index by due time alone.
    const older = new Database(path)
    older.exec(`DROP TRIGGER webhook_numbered; DROP INDEX webhooks_by_number;
      ALTER TABLE webhooks DROP COLUMN number; DELETE FROM meta WHERE key = 'webhook_number';
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      UPDATE webhook_deliveries SET id = 'dlv_' || lower(hex(randomblob(12)));
      DELETE FROM schema_migrations WHERE version = 12`)
    const legacy = older
      .prepare("SELECT id FROM webhook_deliveries WHERE webhook_id = 'wh_a'")
      .pluck()
      .get() as string
    older.close()

    store = openSqlite({ path })
    expect(store.migrated).toEqual(['012_delivery_ids_by_event'])
    expect(store.db.prepare('SELECT id, number FROM webhooks ORDER BY number').all()).toEqual([
      { id: 'wh_a', number: 1 },
      { id: 'wh_b', number: 2 },
    ])
    const indexes = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").pluck().all()
    expect(indexes).not.toContain('webhook_deliveries_due')
    expect(await store.webhooks.requeueDelivery('wh_a', legacy, new Date())).toMatchObject({ id: legacy })

    // The next subscription is numbered after them, and new deliveries are named by event and number.
    await store.webhooks.insert(subscriptionRecord('wh_c', new Date()))
    await createPlant(store.plants, { id: 2n, name: 'b' })
    const [latest] = await store.webhooks.listDeliveries('wh_c', { limit: 1 })
    expect(latest?.id).toBe(`dlv_${(latest?.eventSeq ?? 0).toString(16).padStart(14, '0')}0000000003`)
  })
})

describe('a SQLite database that cannot be opened for writing', () => {
  const failure = (code: string, message: string) => Object.assign(new Error(message), { code })

  it('names the file and says what to do: write access when read-only, room when the disk is full', () => {
    const readOnly = explainOpenFailure(
      failure('SQLITE_READONLY_DIRECTORY', 'attempt to write a readonly database'),
      '/d/p.db',
    )
    expect((readOnly as Error).message).toBe(
      'cannot write to /d/p.db (attempt to write a readonly database): this user needs write access to the file and its folder',
    )
    const full = explainOpenFailure(failure('SQLITE_FULL', 'database or disk is full'), '/d/p.db')
    expect((full as Error).message).toBe(
      'cannot write to /d/p.db (database or disk is full): the disk holding it has no room left',
    )
    expect((full as Error).cause).toMatchObject({ code: 'SQLITE_FULL' })
    const damaged = explainOpenFailure(
      failure('SQLITE_CORRUPT', 'database disk image is malformed'),
      '/d/p.db',
    )
    expect((damaged as Error).message).toBe(
      '/d/p.db is damaged (database disk image is malformed): restore a backup of it (see Backup and restore)',
    )
    const other = failure('SQLITE_MISMATCH', 'datatype mismatch')
    expect(explainOpenFailure(other, '/d/p.db')).toBe(other)
  })
  it('names the file of a write that fails once a command is under way, and the -shm file that cannot be sized', () => {
    const io = explainWriteFailure(failure('SQLITE_IOERR_WRITE', 'disk I/O error'), '/d/p.db')
    expect((io as Error).message).toBe('cannot write to /d/p.db (disk I/O error)')
    const shm = explainWriteFailure(failure('SQLITE_IOERR_SHMSIZE', 'disk I/O error'), '/d/p.db')
    expect((shm as Error).message).toBe(
      'cannot write to /d/p.db-shm (disk I/O error): the disk holding the database may have no room left',
    )
    const plain = new Error('not from SQLite')
    expect(explainWriteFailure(plain, '/d/p.db')).toBe(plain)
  })

  it('reads a current database for a command that only reads, and migrates one that is not', () => {
    const path = join(tempDir(), 'read.db')
    openSqlite({ path }).close()
    const before = statSync(path).mtimeMs
    const reader = openSqlite({ path, toRead: true })
    try {
      expect(reader.migrated).toEqual([])
      expect(reader.db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(0)
    } finally {
      reader.close()
    }
    expect(statSync(path).mtimeMs).toBe(before)
    // One that lacks a migration is brought up to date first, as by any other command.
    const db = new Database(path)
    db.exec('DROP TABLE leases; DELETE FROM schema_migrations WHERE version = 8')
    db.close()
    const behind = openSqlite({ path, toRead: true })
    try {
      expect(behind.migrated).toEqual(['008_leases'])
    } finally {
      behind.close()
    }
    expect(() => openSqlite({ path: join(tempDir(), 'none.db'), toRead: true })).toThrow(/none\.db/)
  })

  it('names the path when the folder it needs cannot be made, and when the path names a folder', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes'), 'a file, not a folder\n')
    const under = join(dir, 'notes', 'sub', 'p.db')
    expect(() => openSqlite({ path: under })).toThrow(
      `cannot open ${under} (ENOTDIR: not a directory, mkdir '${join(dir, 'notes', 'sub')}'): its folder does not exist and cannot be created`,
    )
    expect(() => openSqlite({ path: `${dir}/` })).toThrow(`cannot open ${dir}/: it names a folder`)
  })

  it('makes each missing folder of a path, leaves one that exists, and refuses a file in the way', () => {
    const dir = tempDir()
    const deep = join(dir, 'a', 'b', 'c')
    makeFolder(deep)
    expect(statSync(deep).isDirectory()).toBe(true)
    makeFolder(deep)
    makeFolder(dir)
    writeFileSync(join(dir, 'f'), '')
    expect(() => makeFolder(join(dir, 'f'))).toThrow(/EEXIST/)
    expect(() => makeFolder(join(dir, 'f', 'g', 'h'))).toThrow(/ENOTDIR/)
  })
})
