import type { Span } from '@opentelemetry/api'
import type { Pool, PoolClient } from 'pg'
import { foldName } from '../../plants/fold.js'
import { changedPlant, type NewPlant, type Plant } from '../../plants/model.js'
import { activeSpan, endSpan } from '../../tracing/active.js'
import { startGroupCommit } from '../../tracing/group-commit.js'
import { StoreUnavailableError } from '../errors.js'
import { pageStart } from '../page-start.js'
import { type PendingRead, PerTurn } from '../per-turn.js'
import type {
  BatchCreateItem,
  BatchCreateOutcome,
  BatchRemoveOptions,
  BatchRemoveOutcome,
  CreateExtras,
  CreateOutcome,
  IdempotencyRecord,
  ImportItem,
  ImportOutcome,
  ListedPlant,
  ListQuery,
  OutboxEvent,
  PlantChange,
  PlantFilter,
  PlantStore,
  VersionedPlant,
  WriteOptions,
  WriteResult,
} from '../types.js'
import { CHANGES_CHANNEL, CHANGES_PAYLOAD } from './change-watch.js'
import { guarded } from './errors.js'
import { fanOutSql } from './fan-out.js'
import { lockOutbox } from './outbox-lock.js'
import { countSql, listSql } from './plant-listing.js'
import { inTransaction } from './transaction.js'

/** A create waiting for its batch. */
interface PendingCreate {
  kind: 'create'
  plant: NewPlant
  extras: CreateExtras | undefined
  /** The span of the store call waiting for this write, when traced (see startGroupCommit). */
  span: Span | undefined
  resolve: (outcome: CreateOutcome) => void
  reject: (error: unknown) => void
}

/** An update or delete waiting for its batch. */
interface PendingChange {
  kind: 'change'
  id: bigint
  change: PlantChange | 'delete'
  options: WriteOptions
  /** The span of the store call waiting for this write, when traced (see startGroupCommit). */
  span: Span | undefined
  resolve: (result: WriteResult) => void
  reject: (error: unknown) => void
}

/** What a batch's updates and deletes did: each one's result, and their events in the order made. */
interface ChangesWritten {
  results: WriteResult[]
  events: OutboxEvent[]
}

type PendingWrite = PendingCreate | PendingChange

/** A page asked for: `from` is the smallest id it may hold. */
interface PageQuery {
  from: string
  limit: number
  tag: string | undefined
}

/** A page waiting for the end of its turn, as plants or as JSON text. */
interface PendingPage<T> extends PageQuery {
  resolve: (page: T) => void
  reject: (error: unknown) => void
}

interface PlantRow {
  id: string
  name: string
  tag: string | null
}

interface VersionedRow extends PlantRow {
  version: number
}

/** A create's outcome in its batch; 'next-batch': not written, to be tried again in the next batch. */
type BatchOutcome = CreateOutcome | 'next-batch'

/** What a batch's creates wrote: each one's outcome and event, in the order they were given. */
interface CreatesWritten {
  outcomes: BatchOutcome[]
  events: Array<OutboxEvent | undefined>
}

const COLUMNS = 'id::text AS id, name, tag'

/** A page: its plants from `$1` on, at most `$2`, with tag `$3`. */
const PAGE = `SELECT ${COLUMNS} FROM plants WHERE id >= $1 ORDER BY plants.id LIMIT $2`
const PAGE_BY_TAG = `SELECT ${COLUMNS} FROM plants WHERE tag = $3 AND id >= $1 ORDER BY plants.id LIMIT $2`

/** Creates in one batch at most; a larger queue is split over several transactions. */
const MAX_BATCH = 500

/**
 * Batches of writes in flight at once from one instance. Every batch takes the outbox lock for its
 * events and holds it through its COMMIT, so batches commit one after another whatever this is; a
 * second batch in flight only splits the writes that arrive during a commit into more, smaller
 * transactions, each waiting for the lock and flushing the WAL on its own. With one, everything that
 * arrives during a commit goes into the next batch.
 */
const BATCHES_AT_ONCE = 1

function toPlant(row: PlantRow): Plant {
  // int8 arrives as text and goes straight to BigInt: it never passes through a JS number.
  const id = BigInt(row.id)
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag }
}

/**
 * The positions of `ids` in ascending order (given order among equal ids). Every transaction that
 * writes several plants takes their rows in this order, so two that share ids (retries on one
 * instance, the same writes on another, an import) wait for each other instead of each holding a row
 * the other wants, which PostgreSQL would fail as a deadlock.
 */
function inIdOrder(ids: readonly bigint[]): number[] {
  return ids
    .map((_, i) => i)
    .sort((a, b) => {
      const x = ids[a] as bigint
      const y = ids[b] as bigint
      return x < y ? -1 : x > y ? 1 : a - b
    })
}

/**
 * Plants in PostgreSQL with group commit: creates, updates and deletes that arrive while the batch
 * before is in flight are queued and written together, one transaction and one WAL flush per batch,
 * and each write resolves only after its batch committed. `INSERT … ON CONFLICT DO NOTHING`
 * makes a duplicate (also one inserted by another instance a moment earlier) fail only its own
 * request; a failed commit fails every request of its batch.
 */
export class PostgresPlantStore implements PlantStore {
  private queue: PendingWrite[] = []
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()
  /** The pages asked for in this turn, each read once at its end (readEachOnce). */
  private readonly pages = new PerTurn<PendingPage<ListedPlant[]>>((pages) =>
    readEachOnce(pages, async (page) => (await this.queryPage(page)).map((row) => ({ plant: toPlant(row) }))),
  )
  /** The point reads of this turn, made together at its end (readGathered). */
  private readonly reads = new PerTurn<PendingRead>((reads) => void this.readGathered(reads))

  constructor(
    private readonly pool: Pool,
    /**
     * Told after a commit that wrote events: the dispatcher sends the deliveries they queued at once,
     * and the change feed's watchers read the changes.
     */
    private readonly onCommitted: (written: EventsWritten) => void = () => {},
  ) {}

  /**
   * One transaction for the whole batch; an existing id is compared, never overwritten. One INSERT
   * writes every plant and one SELECT reads the ids already taken: a round trip or two a batch, not a
   * line, which is what bounds an import's speed.
   */
  async importBatch(items: readonly ImportItem[]): Promise<ImportOutcome[]> {
    const { outcomes, written } = await inTransaction(this.pool, async (client) => {
      // Of the lines that share an id the first is the one inserted; the others compare with it.
      const created = await insertAbsent(
        client,
        items.map((item) => item.plant),
      )
      const outcomes: ImportOutcome[] = []
      const events: Array<OutboxEvent | undefined> = []
      const taken: number[] = []
      // Dated after the inserts, which waited for any transaction that was deleting one of these ids.
      const at = new Date()
      items.forEach((item, i) => {
        const id = item.plant.id.toString()
        if (created.delete(id)) {
          outcomes[i] = 'created'
          events[i] = item.event?.(at)
        } else taken.push(i)
      })
      if (taken.length > 0) {
        const existing = await client.query<PlantRow>(
          `SELECT ${COLUMNS} FROM plants WHERE id = ANY($1::bigint[])`,
          [taken.map((i) => (items[i] as ImportItem).plant.id.toString())],
        )
        const rows = new Map(existing.rows.map((row) => [row.id, row]))
        for (const i of taken) {
          const { plant } = items[i] as ImportItem
          const row = rows.get(plant.id.toString())
          outcomes[i] =
            row && row.name === plant.name && row.tag === (plant.tag ?? null) ? 'unchanged' : 'conflict'
        }
      }
      return { outcomes, written: await writeEvents(client, inArrivalOrder(events)) }
    })
    this.onCommitted(written)
    return outcomes
  }

  /**
   * A transaction of its own, outside the group commit: it is already one round trip for many plants.
   * The plants are inserted in id order, then the key is taken, as a group's creates take theirs, so
   * that it never deadlocks with one; a refusal rolls everything back.
   */
  async createMany(
    items: readonly BatchCreateItem[],
    idempotency?: IdempotencyRecord,
  ): Promise<BatchCreateOutcome | 'key-taken'> {
    return allOrNothing<BatchCreateOutcome | 'key-taken'>(this.pool, this.onCommitted, async (client) => {
      const created = await insertAbsent(
        client,
        items.map((item) => item.plant),
      )
      if (created.size < items.length) {
        const seen = new Set<string>()
        const index = items.findIndex(({ plant }) => {
          const id = plant.id.toString()
          if (seen.has(id) || !created.has(id)) return true
          seen.add(id)
          return false
        })
        throw new Refused({ outcome: 'exists', index })
      }
      if (idempotency && !(await storeKey(client, idempotency, new Date()))) throw new Refused('key-taken')
      // Dated after the inserts, which waited for any transaction that was deleting one of these ids.
      const at = new Date()
      const events = items.flatMap((item) => (item.event ? [item.event(at)] : []))
      return { outcome: { outcome: 'created' }, written: await writeEvents(client, events) }
    })
  }

  /**
   * A transaction of its own, as createMany: the rows are locked in id order (as every batch takes
   * them), then deleted with their events in the order asked; a missing one, unless allowed, writes
   * nothing.
   */
  async removeMany(ids: readonly bigint[], options: BatchRemoveOptions): Promise<BatchRemoveOutcome> {
    return allOrNothing<BatchRemoveOutcome>(this.pool, this.onCommitted, async (client) => {
      const found = await client.query<PlantRow>(
        `SELECT ${COLUMNS} FROM plants WHERE id = ANY($1::bigint[]) ORDER BY plants.id FOR UPDATE`,
        [[...new Set(ids.map(String))]],
      )
      // Dated once the rows' locks are held, after any write to them that committed first.
      const at = new Date()
      const stored = new Map(found.rows.map((row) => [row.id, row]))
      const deleted: Plant[] = []
      for (const id of ids) {
        const key = id.toString()
        const row = stored.get(key)
        // Taken once: a repeated id finds it deleted already.
        stored.delete(key)
        if (row) deleted.push(toPlant(row))
        else if (!options.allowMissing) throw new Refused({ outcome: 'missing', id })
      }
      if (deleted.length > 0)
        await client.query('DELETE FROM plants WHERE id = ANY($1::bigint[])', [
          deleted.map((plant) => plant.id.toString()),
        ])
      const { event } = options
      const events = event ? deleted.map((plant) => event(plant, at)) : []
      const outcome: BatchRemoveOutcome = { outcome: 'deleted', ids: deleted.map((plant) => plant.id) }
      return { outcome, written: await writeEvents(client, events) }
    })
  }

  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'create', plant, extras, span: activeSpan(), resolve, reject })
      this.schedule()
    })
  }

  async get(id: bigint): Promise<Plant | undefined> {
    const result = await guarded(() =>
      this.pool.query<PlantRow>(`SELECT ${COLUMNS} FROM plants WHERE id = $1`, [id.toString()]),
    )
    const row = result.rows[0]
    return row && toPlant(row)
  }

  read(id: bigint): Promise<VersionedPlant | undefined> {
    return new Promise((resolve, reject) => this.reads.add({ id, resolve, reject }))
  }

  /**
   * Every point read of the turn in one query: one round trip, and one statement for the database to
   * parse, plan and run, so a load of reads does not make the database the bottleneck. The query is
   * sent once the turn has received every request it serves, so a read never misses a write whose
   * response went out before its request came.
   */
  private async readGathered(reads: PendingRead[]): Promise<void> {
    let rows: VersionedRow[]
    try {
      const ids = [...new Set(reads.map((read) => read.id.toString()))]
      const result = await guarded(() =>
        this.pool.query<VersionedRow>(`SELECT ${COLUMNS}, version FROM plants WHERE id = ANY($1::bigint[])`, [
          ids,
        ]),
      )
      rows = result.rows
    } catch (error) {
      for (const read of reads) read.reject(error)
      return
    }
    const byId = new Map(rows.map((row) => [row.id, row]))
    for (const read of reads) {
      const row = byId.get(read.id.toString())
      read.resolve(row && { plant: toPlant(row), version: row.version })
    }
  }

  list(query: ListQuery): Promise<ListedPlant[]> {
    const tags = query.tags ?? []
    const byId = query.order === undefined || (query.order.field === 'id' && !query.order.descending)
    if (query.text !== undefined || tags.length > 1 || !byId) return this.listAs(query)
    // The plain listing in id order, the one clients poll: each distinct page of a turn is read once.
    const start = pageStart(query.after?.id)
    if (start === undefined) return Promise.resolve([])
    const from = start.toString()
    return new Promise((resolve, reject) =>
      this.pages.add({ from, limit: query.limit, tag: tags[0], resolve, reject }),
    )
  }

  /** Any other listing, read on its own. */
  private async listAs(query: ListQuery): Promise<ListedPlant[]> {
    const result = await guarded(() => this.pool.query<PlantRow & { key?: string }>(listSql(query)))
    return result.rows.map((row) =>
      row.key === undefined ? { plant: toPlant(row) } : { plant: toPlant(row), key: row.key },
    )
  }

  async count(filter: PlantFilter): Promise<number> {
    const result = await guarded(() => this.pool.query<{ n: string }>(countSql(filter)))
    return Number(result.rows[0]?.n)
  }

  private async queryPage({ from, limit, tag }: PageQuery): Promise<PlantRow[]> {
    const result = await guarded(() =>
      tag === undefined
        ? this.pool.query<PlantRow>(PAGE, [from, limit])
        : this.pool.query<PlantRow>(PAGE_BY_TAG, [from, limit, tag]),
    )
    return result.rows
  }

  update(id: bigint, change: PlantChange, options: WriteOptions = {}): Promise<WriteResult> {
    return this.change(id, change, options)
  }

  async remove(id: bigint, options: WriteOptions = {}): Promise<WriteResult> {
    const result = await this.change(id, 'delete', options)
    // The plant as it was, with the version it had: a deleted plant has no next version.
    return result.outcome === 'done' ? { ...result, version: result.version - 1 } : result
  }

  /** Waits until every accepted create has settled, so that closing never drops one. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0 || this.queue.length > 0 || this.scheduled) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /** Collects what arrives within this turn of the event loop, then starts a batch if a slot is free. */
  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight.size >= BATCHES_AT_ONCE) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.queue.length === 0 || this.inFlight.size >= BATCHES_AT_ONCE) return
      const batch = this.queue.splice(0, MAX_BATCH)
      const flush = this.flush(batch).finally(() => {
        this.inFlight.delete(flush)
        this.schedule()
      })
      this.inFlight.add(flush)
      this.schedule()
    })
  }

  /** Queues an update or delete for the next batch. */
  private change(id: bigint, change: PendingChange['change'], options: WriteOptions): Promise<WriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'change', id, change, options, span: activeSpan(), resolve, reject })
      this.schedule()
    })
  }

  private async flush(batch: PendingWrite[]): Promise<void> {
    let outcomes: Array<BatchOutcome | WriteResult>
    let written: EventsWritten
    const span = startGroupCommit('postgresql', batch)
    try {
      ;({ outcomes, written } = await inTransaction(this.pool, (client) => this.write(client, batch)))
      endSpan(span)
    } catch (error) {
      endSpan(span, error)
      // A batch the database did not respond to (within the timeout, or on a broken link): the
      // writes queued behind it, one batch at a time, would each wait a whole timeout more for the
      // same failure, so they get it now.
      const failed = error instanceof StoreUnavailableError ? [...batch, ...this.queue.splice(0)] : batch
      for (const item of failed) item.reject(error)
      return
    }
    const again: PendingWrite[] = []
    batch.forEach((item, i) => {
      const outcome = outcomes[i]
      if (outcome === 'next-batch') again.push(item)
      else if (item.kind === 'create') item.resolve(outcome as CreateOutcome)
      else item.resolve(outcome as WriteResult)
    })
    // Ahead of the writes queued meanwhile, which arrived after them.
    this.queue.unshift(...again)
    this.onCommitted(written)
  }

  /**
   * One batch in its transaction: the creates first, then the updates and deletes in id order, then
   * the events under the outbox lock, the creates' in the order they came, then the changes' in the
   * order they were made. A write of a plant is made after any other of the same plant that came
   * before it in the batch, and sees it.
   */
  private async write(
    client: PoolClient,
    batch: PendingWrite[],
  ): Promise<{ outcomes: Array<BatchOutcome | WriteResult>; written: EventsWritten }> {
    const creates: PendingCreate[] = []
    const changes: PendingChange[] = []
    const at: { creates: number[]; changes: number[] } = { creates: [], changes: [] }
    batch.forEach((item, i) => {
      if (item.kind === 'create') {
        creates.push(item)
        at.creates.push(i)
      } else {
        changes.push(item)
        at.changes.push(i)
      }
    })
    const outcomes: Array<BatchOutcome | WriteResult> = []
    const events: Array<OutboxEvent | undefined> = []
    if (creates.length > 0) {
      const written = creates.some((item) => item.extras?.idempotency)
        ? await this.writeEach(client, creates)
        : await this.writeCreates(client, creates)
      written.outcomes.forEach((outcome, k) => {
        outcomes[at.creates[k] as number] = outcome
      })
      events.push(...written.events)
    }
    if (changes.length > 0) {
      const written = await writeChanges(client, changes)
      written.results.forEach((result, k) => {
        outcomes[at.changes[k] as number] = result
      })
      events.push(...written.events)
    }
    return { outcomes, written: await writeEvents(client, inArrivalOrder(events)) }
  }

  /** The creates of a batch that carries no Idempotency-Key record, in one INSERT. */
  private async writeCreates(client: PoolClient, batch: PendingCreate[]): Promise<CreatesWritten> {
    // Only the first create of an id in a batch is attempted: a later one is a duplicate whether or
    // not the first succeeds.
    const first = new Map<string, PendingCreate>()
    for (const item of batch) {
      const key = item.plant.id.toString()
      if (!first.has(key)) first.set(key, item)
    }
    const rows = [...first.values()]
    const created = await insertAbsent(
      client,
      rows.map((r) => r.plant),
    )
    // Dated after the inserts, which waited for any transaction that was deleting one of these ids.
    const at = new Date()
    const outcomes = batch.map((item) =>
      first.get(item.plant.id.toString()) === item && created.has(item.plant.id.toString())
        ? 'created'
        : 'exists',
    )
    return {
      outcomes,
      events: batch.map((item, i) => (outcomes[i] === 'created' ? item.extras?.event?.(at) : undefined)),
    }
  }

  /**
   * The batch one create at a time, for batches that carry Idempotency-Key records: a create whose
   * key is held by an unexpired record (also one committed by another instance) is undone and
   * resolves to 'key-taken', writing nothing. The plants are inserted first, in id order (see
   * inIdOrder), then the records, in key order: a record waits for another transaction's record
   * under the same key, and two batches that took their keys in their plants' order, which need not
   * be the keys' order, could each hold a key the other wanted, deadlocked on every retry.
   *
   * Only the first create of an id is written. A later one is 'exists' unless the first is undone
   * for its key: then the id is free, and the later one is left for the next batch, as SQLite,
   * writing in arrival order, would create it. Writing it here would take its key after the keys
   * this batch holds, out of key order.
   */
  private async writeEach(client: PoolClient, batch: PendingCreate[]): Promise<CreatesWritten> {
    const outcomes: BatchOutcome[] = []
    const events: Array<CreateExtras['event']> = []
    const now = new Date()
    const keyed: number[] = []
    const firstOf = new Map<string, number>()
    const duplicates: Array<[at: number, first: number]> = []
    for (const i of inIdOrder(batch.map((item) => item.plant.id))) {
      const { plant, extras } = batch[i] as PendingCreate
      const first = firstOf.get(plant.id.toString())
      if (first !== undefined) {
        duplicates.push([i, first])
        continue
      }
      firstOf.set(plant.id.toString(), i)
      if ((await insertAbsent(client, [plant])).size === 0) {
        outcomes[i] = 'exists'
        continue
      }
      if (extras?.idempotency) keyed.push(i)
      events[i] = extras?.event
      outcomes[i] = 'created'
    }
    for (const i of inKeyOrder(batch, keyed)) {
      const { plant, extras } = batch[i] as PendingCreate
      const record = extras?.idempotency as IdempotencyRecord
      if (!(await storeKey(client, record, now))) {
        await client.query('DELETE FROM plants WHERE id = $1', [plant.id.toString()])
        events[i] = undefined
        outcomes[i] = 'key-taken'
      }
    }
    for (const [i, first] of duplicates)
      outcomes[i] = outcomes[first] === 'key-taken' ? 'next-batch' : 'exists'
    // Dated after the inserts, which waited for any transaction that was deleting one of these ids.
    const at = new Date()
    return { outcomes, events: batch.map((_, i) => events[i]?.(at)) }
  }
}

/**
 * Stores an Idempotency-Key record in the caller's transaction: an expired record under the same key
 * is overwritten, an unexpired one is left alone (false).
 */
async function storeKey(client: PoolClient, record: IdempotencyRecord, now: Date): Promise<boolean> {
  const stored = await client.query(
    `INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (token_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
       status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= $7`,
    [record.tokenId, record.key, record.fingerprint, record.status, record.body, record.expiresAt, now],
  )
  return stored.rowCount !== 0
}

/** Thrown inside a batch's transaction to roll it back, carrying the outcome to resolve with. */
class Refused<T> {
  constructor(readonly outcome: T) {}
}

/**
 * Runs `work` in a transaction; a Refused thrown by it rolls the transaction back and resolves with
 * its outcome. Tells `onCommitted` what the committed work's events did.
 */
async function allOrNothing<T>(
  pool: Pool,
  onCommitted: (written: EventsWritten) => void,
  work: (client: PoolClient) => Promise<{ outcome: T; written: EventsWritten }>,
): Promise<T> {
  let written: { outcome: T; written: EventsWritten }
  try {
    written = await inTransaction(pool, work)
  } catch (error) {
    if (error instanceof Refused) return error.outcome as T
    throw error
  }
  onCommitted(written.written)
  return written.outcome
}

/**
 * The positions `keyed` of `batch` in ascending (token id, key); among creates under one key their
 * order in `keyed` (id order) is kept, so the one of the lowest id gets the key.
 */
function inKeyOrder(batch: readonly PendingCreate[], keyed: readonly number[]): number[] {
  const recordAt = (i: number) => (batch[i] as PendingCreate).extras?.idempotency as IdempotencyRecord
  return [...keyed].sort((a, b) => {
    const x = recordAt(a)
    const y = recordAt(b)
    if (x.tokenId !== y.tokenId) return x.tokenId < y.tokenId ? -1 : 1
    return x.key < y.key ? -1 : x.key > y.key ? 1 : 0
  })
}

/**
 * A batch's updates and deletes in three statements whatever their number: the rows read and locked
 * (FOR UPDATE, in id order, as every batch takes them), each change checked and made in order on
 * what the ones before it left, then one UPDATE of the rows changed and one DELETE of the rows
 * deleted. The rows stay locked from the check to the commit, so no change from any instance slips
 * between the two, not even a delete and a re-create that starts the version again.
 */
async function writeChanges(client: PoolClient, changes: readonly PendingChange[]): Promise<ChangesWritten> {
  // ORDER BY sets the order the rows are locked in (FOR UPDATE locks them as they are returned).
  const found = await client.query<VersionedRow>(
    `SELECT ${COLUMNS}, version FROM plants WHERE id = ANY($1::bigint[]) ORDER BY plants.id FOR UPDATE`,
    [[...new Set(changes.map((change) => change.id.toString()))]],
  )
  // Dated once the rows' locks are held, after any write to them that committed first.
  const at = new Date()
  const stored = new Map<string, { plant: Plant; version: number } | undefined>()
  for (const row of found.rows) stored.set(row.id, { plant: toPlant(row), version: row.version })
  const changed = new Set<string>()
  const results: WriteResult[] = []
  const events: OutboxEvent[] = []
  for (const k of inIdOrder(changes.map((change) => change.id))) {
    const { id, change, options } = changes[k] as PendingChange
    const key = id.toString()
    const current = stored.get(key)
    if (current === undefined) {
      results[k] = { outcome: 'missing' }
      continue
    }
    if (options.precondition && !options.precondition(current.plant, current.version)) {
      results[k] = { outcome: 'precondition-failed' }
      continue
    }
    const next = change === 'delete' ? current.plant : changedPlant(current.plant, change)
    // A change that changes nothing keeps the version (and so the ETag) and emits no event.
    if (next === undefined) {
      results[k] = { outcome: 'done', ...current }
      continue
    }
    results[k] = { outcome: 'done', plant: next, version: current.version + 1 }
    stored.set(key, change === 'delete' ? undefined : { plant: next, version: current.version + 1 })
    changed.add(key)
    // An update's event is told the plant as it was; a delete's plant is the one it removes.
    if (options.event)
      events.push(change === 'delete' ? options.event(next, at) : options.event(next, at, current.plant))
  }
  const updated = [...changed].flatMap((key) => {
    const row = stored.get(key)
    return row ? [row] : []
  })
  const deleted = [...changed].filter((key) => stored.get(key) === undefined)
  if (updated.length > 0) {
    await client.query(
      `UPDATE plants SET name = u.name, name_folded = u.name_folded, tag = u.tag, version = u.version,
         updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::int[])
         AS u(id, name, name_folded, tag, version)
       WHERE plants.id = u.id`,
      [...plantColumns(updated.map((row) => row.plant)), updated.map((row) => row.version)],
    )
  }
  if (deleted.length > 0) await client.query('DELETE FROM plants WHERE id = ANY($1::bigint[])', [deleted])
  return { results, events }
}

/** The events of the rows written, in the order their requests (or lines) came. */
function inArrivalOrder(events: Array<OutboxEvent | undefined>): OutboxEvent[] {
  return events.filter((event): event is OutboxEvent => event !== undefined)
}

/**
 * Every column of the plants' rows that a write gives, as the arrays unnest() takes: ids, names, the
 * names folded as search compares them (foldName: computed here, since SQL's lower() differs between
 * the stores), tags.
 */
function plantColumns(plants: readonly NewPlant[]): [string[], string[], string[], Array<string | null>] {
  return [
    plants.map((p) => p.id.toString()),
    plants.map((p) => p.name),
    plants.map((p) => foldName(p.name)),
    plants.map((p) => p.tag ?? null),
  ]
}

/**
 * Inserts the plants whose id is not taken, in one statement; the ids inserted. Every insert of a plant
 * goes through here, which writes each column a plant's row has (plantColumns). Rows go in id order,
 * as every batch takes them (see inIdOrder), and in the given order among plants that share an id:
 * PostgreSQL's sort need not keep it, and the first row of an id inserted is the one stored.
 */
export async function insertAbsent(client: PoolClient, plants: readonly NewPlant[]): Promise<Set<string>> {
  const inserted = await client.query<{ id: string }>(
    `INSERT INTO plants (id, name, name_folded, tag, created_at, updated_at)
     SELECT id, name, name_folded, tag, now(), now()
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY
       AS t(id, name, name_folded, tag, line)
     ORDER BY id, line
     ON CONFLICT (id) DO NOTHING
     RETURNING id::text AS id`,
    plantColumns(plants),
  )
  return new Set(inserted.rows.map((r) => r.id))
}

/**
 * Reads each distinct page of a turn once, however many asked for it, so that a load of the same
 * page (a first page many clients poll) does not make the database the bottleneck. Different pages go
 * as queries of their own, which the pool runs side by side; one query for them all (LATERAL) would
 * run them one after another in one database process.
 */
function readEachOnce<T>(pages: PendingPage<T>[], read: (page: PageQuery) => Promise<T>): void {
  const distinct = new Map<string, PendingPage<T>[]>()
  for (const page of pages) {
    const key = JSON.stringify([page.from, page.limit, page.tag ?? null])
    const same = distinct.get(key)
    if (same) same.push(page)
    else distinct.set(key, [page])
  }
  for (const same of distinct.values()) {
    read(same[0] as PendingPage<T>).then(
      (value) => {
        for (const page of same) page.resolve(value)
      },
      (error: unknown) => {
        for (const page of same) page.reject(error)
      },
    )
  }
}

/** What a transaction's events did: whether they queued a webhook delivery, and whether there were any. */
export interface EventsWritten {
  queued: boolean
  changed: boolean
}

const NOTHING_WRITTEN: EventsWritten = { queued: false, changed: false }

/**
 * Appends outbox events inside the caller's transaction and fans them out to webhook deliveries in
 * the same statement, as the SQLite store does: the dispatcher then only claims and sends, and never
 * rewrites an event row (each such UPDATE a new row version and its index entries). The advisory
 * lock, held until COMMIT, makes seq order commit order across every instance (see 001_init.sql) and
 * orders the batch against subscriptions being created (see PostgresWebhookStore.insert); it is
 * taken last, so it is held only for this statement and the commit. Each event is a plant's change:
 * its facts go into the same rows, and the same statement notifies every instance that watches
 * changes (delivered only if the transaction commits).
 */
async function writeEvents(client: PoolClient, events: OutboxEvent[]): Promise<EventsWritten> {
  if (events.length === 0) return NOTHING_WRITTEN
  await lockOutbox(client)
  const written = await client.query<{ queued: number }>(
    `WITH e AS (
       INSERT INTO events (type, payload, created_at, fanned_out_at, traceparent, id, plant_id, actor,
         request_id, before)
       SELECT type, payload, created_at, created_at, traceparent, id, plant_id, actor, request_id, before
       FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::bigint[],
           $7::text[], $8::text[], $9::text[]) WITH ORDINALITY
         AS t(type, payload, created_at, traceparent, id, plant_id, actor, request_id, before, ord)
       ORDER BY ord
       RETURNING seq, type, created_at
     ), d AS (
       ${fanOutSql('e', 'e.created_at')}
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM d)::int AS queued, pg_notify($10, ${CHANGES_PAYLOAD})::text AS notified`,
    [
      events.map((e) => e.type),
      events.map((e) => e.payload),
      events.map((e) => e.occurredAt.toISOString()),
      events.map((e) => e.traceparent ?? null),
      // Null for a change's event: its id is made from its seq when read (eventIdSql).
      events.map((e) => e.id ?? null),
      events.map((e) => e.change?.plantId.toString() ?? null),
      events.map((e) => (e.change ? JSON.stringify(e.change.actor) : null)),
      events.map((e) => e.change?.requestId ?? null),
      events.map((e) => e.change?.before ?? null),
      CHANGES_CHANNEL,
    ],
  )
  return { queued: (written.rows[0]?.queued ?? 0) > 0, changed: true }
}
