import type { Database, Statement } from 'better-sqlite3'
import type { NewPlant, Plant } from '../../plants/model.js'
import { activeSpan } from '../../tracing/active.js'
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
import type { BatchResult, BatchRow, KeyRecord, RowOutcome } from './batch.js'
import { type Outbox, outboxRow, prepareOutbox } from './fan-out.js'
import { PlantListing } from './plant-listing.js'
import { INSERT_PLANT, type PlantRow, plantRowValues, toPlant, type VersionedRow } from './plant-row.js'
import type { BatchSink } from './writer.js'

function keyRecord(record: IdempotencyRecord): KeyRecord {
  return {
    tokenId: record.tokenId,
    key: record.key,
    fingerprint: record.fingerprint,
    status: record.status,
    body: record.body,
    expiresAt: record.expiresAt.getTime(),
  }
}

/** A create, update or delete waiting for its batch; resolved with its row's outcome. */
interface PendingWrite {
  row: BatchRow
  resolve: (outcome: RowOutcome) => void
  reject: (error: unknown) => void
}

/**
 * Plants in SQLite with group commit: every create, update and delete that arrives within one turn
 * of the event loop joins one transaction, in the order they came, and each resolves only once
 * that transaction is durable (fsynced). One fsync then pays for a whole batch instead of one
 * request. Each turn's writes are committed at the end of the turn (see batchSink), and the next
 * turn's are written while the last are being fsynced.
 */
export class SqlitePlantStore implements PlantStore {
  /** The writes of this turn of the event loop, written as one batch at its end (flush). */
  private readonly writes = new PerTurn<PendingWrite>((batch) => this.flush(batch))
  /** The point reads of this turn, read together at its end (readGathered). */
  private readonly reads = new PerTurn<PendingRead>((reads) => this.readGathered(reads))
  /** Batches sent and not settled yet. */
  private unsettled = 0
  private readonly idle: Array<() => void> = []
  private readonly outbox: Outbox
  private readonly selectOne: Statement
  private readonly selectVersioned: Statement
  private readonly listing: PlantListing
  private readonly insertIfAbsent: Statement

  /** Set when the open transaction queued a webhook delivery; told to the listener once it commits. */
  private deliveriesQueued = false

  constructor(
    private readonly db: Database,
    private readonly sink: BatchSink,
    /** Told after a commit that queued webhook deliveries (once durable), so the dispatcher sends them at once. */
    private readonly onDeliveriesQueued: () => void = () => {},
    /** Throws when the database file is no longer the one opened (see OpenedFile). */
    private readonly checkFile: () => void = () => {},
    /** Told after a commit that wrote plant changes (once durable), so that feed readers read them at once. */
    private readonly onChanged: () => void = () => {},
  ) {
    this.outbox = prepareOutbox(db)
    this.selectOne = db.prepare('SELECT id, name, tag FROM plants WHERE id = ?').safeIntegers(true)
    this.insertIfAbsent = db.prepare(`${INSERT_PLANT} ON CONFLICT (id) DO NOTHING`)
    this.selectVersioned = db
      .prepare('SELECT id, name, tag, version FROM plants WHERE id = ?')
      .safeIntegers(true)
    // Keyset pagination: each page is one descent of the order's index, at any depth.
    this.listing = new PlantListing(db)
  }

  async importBatch(items: readonly ImportItem[]): Promise<ImportOutcome[]> {
    const now = Date.now()
    const run = this.db.transaction(() => {
      // Read once the write lock is held, so no earlier commit (one that freed an id, say) is dated later.
      const at = new Date()
      return items.map(({ plant, event }): ImportOutcome => {
        const tag = plant.tag ?? null
        if (this.insertIfAbsent.run(...plantRowValues(plant, now)).changes === 0) {
          const existing = this.selectOne.get(plant.id) as PlantRow
          return existing.name === plant.name && existing.tag === tag ? 'unchanged' : 'conflict'
        }
        if (event) this.writeEvent(event(at), now)
        return 'created'
      })
    })
    this.checkFile()
    this.deliveriesQueued = false
    const outcomes = run.immediate()
    this.announceDeliveries()
    // Only an inserted plant writes its event.
    if (outcomes.some((outcome, i) => outcome === 'created' && items[i]?.event)) this.onChanged()
    return outcomes
  }

  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome> {
    const event = extras?.event
    const key = extras?.idempotency
    const row: BatchRow = {
      kind: 'create',
      id: plant.id,
      name: plant.name,
      tag: plant.tag ?? null,
      event: event && ((at: number) => outboxRow(event(new Date(at)))),
      idempotency: key && keyRecord(key),
      span: activeSpan(),
    }
    return this.write(row) as Promise<CreateOutcome>
  }

  /**
   * Joins the turn's group commit as one row of it, so that it is durable when it resolves, as a
   * create is; all or nothing within the group's transaction.
   */
  createMany(
    items: readonly BatchCreateItem[],
    idempotency?: IdempotencyRecord,
  ): Promise<BatchCreateOutcome | 'key-taken'> {
    return this.write({
      kind: 'create-many',
      items: items.map(({ plant, event }) => ({
        id: plant.id,
        name: plant.name,
        tag: plant.tag ?? null,
        event: event && ((at: number) => outboxRow(event(new Date(at)))),
      })),
      idempotency: idempotency && keyRecord(idempotency),
      span: activeSpan(),
    }) as Promise<BatchCreateOutcome | 'key-taken'>
  }

  /** As createMany: one row of the turn's group commit, durable when it resolves, all or nothing. */
  removeMany(ids: readonly bigint[], options: BatchRemoveOptions): Promise<BatchRemoveOutcome> {
    const { event } = options
    return this.write({
      kind: 'delete-many',
      ids,
      allowMissing: options.allowMissing,
      event: event && ((plant: Plant, at: number) => outboxRow(event(plant, new Date(at)))),
      span: activeSpan(),
    }) as Promise<BatchRemoveOutcome>
  }

  update(id: bigint, change: PlantChange, options: WriteOptions = {}): Promise<WriteResult> {
    return this.write({ kind: 'update', id, change, options, span: activeSpan() }) as Promise<WriteResult>
  }

  remove(id: bigint, options: WriteOptions = {}): Promise<WriteResult> {
    return this.write({
      kind: 'delete',
      id,
      change: undefined,
      options,
      span: activeSpan(),
    }) as Promise<WriteResult>
  }

  private write(row: BatchRow): Promise<RowOutcome> {
    return new Promise((resolve, reject) => this.writes.add({ row, resolve, reject }))
  }

  async get(id: bigint): Promise<Plant | undefined> {
    const row = this.selectOne.get(id) as PlantRow | undefined
    return this.onceDurable(row && toPlant(row))
  }

  read(id: bigint): Promise<VersionedPlant | undefined> {
    return new Promise((resolve, reject) => this.reads.add({ id, resolve, reject }))
  }

  /**
   * Reads every point read of the turn in one read transaction. Outside a transaction each read takes
   * and drops SQLite's shared lock (two fcntl calls), which can cost more than the read itself. The
   * snapshot is taken here, after the turn has received every request it serves, so a read never
   * misses a write (of this process or another) whose response went out before its request arrived; a snapshot opened at a turn's first read could miss one acknowledged later in that turn
   * to a client that then pipelined the read on a connection read after it.
   */
  private readGathered(reads: PendingRead[]): void {
    let rows: Array<VersionedRow | undefined>
    try {
      const readAll = () => reads.map(({ id }) => this.selectVersioned.get(id) as VersionedRow | undefined)
      // Every transaction on this connection is synchronous, so none is open here; were one open, a
      // nested transaction would read its uncommitted rows, and each read goes alone instead.
      rows = reads.length > 1 && !this.db.inTransaction ? this.db.transaction(readAll)() : readAll()
    } catch (error) {
      for (const read of reads) read.reject(error)
      this.settled()
      return
    }
    const found = rows.map((row) => row && { plant: toPlant(row), version: Number(row.version) })
    const resolveAll = (plants: typeof found) => {
      for (const [i, read] of reads.entries()) read.resolve(plants[i])
    }
    const durable = this.onceDurable(found)
    if (!(durable instanceof Promise)) resolveAll(durable)
    else
      void durable.then(resolveAll, (error: unknown) => {
        for (const read of reads) read.reject(error)
      })
    this.settled()
  }

  async list(query: ListQuery): Promise<ListedPlant[]> {
    return this.onceDurable(this.listing.list(query))
  }

  async count(filter: PlantFilter): Promise<number> {
    return this.onceDurable(this.listing.count(filter))
  }

  /**
   * What a read found, once every batch committed before it is durable. The writer's commits are
   * visible from the moment they are made, an fsync before they resolve: a read resolved before that
   * fsync could show a plant that a failed fsync or a power cut then takes back. A read that found a
   * write resolves no sooner than the write. Reads while nothing awaits its fsync (a load of reads
   * alone) resolve at once.
   */
  private onceDurable<T>(found: T): T | Promise<T> {
    const durable = this.sink.durable()
    return durable === undefined ? found : durable.then(() => found)
  }

  /**
   * Resolves once every accepted write has settled and every point read asked has been read, so
   * that closing never drops one. A read waiting for a batch's fsync (onceDurable) waits for a write
   * counted here, and resolves with what it already read.
   */
  async drain(): Promise<void> {
    while (this.busy()) {
      await new Promise<void>((resolve) => this.idle.push(resolve))
    }
  }

  private announceDeliveries(): void {
    if (!this.deliveriesQueued) return
    this.deliveriesQueued = false
    this.onDeliveriesQueued()
  }

  /** Writes the event and its deliveries, inside the caller's transaction. */
  private writeEvent(event: OutboxEvent, now: number): void {
    const seq = this.outbox.write(outboxRow(event), now)
    if (this.outbox.fanOut(seq, seq) > 0) this.deliveriesQueued = true
  }

  /**
   * Sends the turn's writes as one batch, without waiting for the last one to be durable (a batch
   * that finds the write lock taken is joined by the next). Each write resolves when its own
   * batch is durable.
   */
  private flush(batch: PendingWrite[]): void {
    this.unsettled++
    let write: Promise<BatchResult>
    try {
      write = this.sink.write(
        batch.map((item) => item.row),
        Date.now(),
      )
    } catch (error) {
      write = Promise.reject(error)
    }
    void write
      .then(
        ({ outcomes, queued, changed }) => {
          for (let i = 0; i < batch.length; i++) batch[i]?.resolve(outcomes[i] as RowOutcome)
          if (queued) this.onDeliveriesQueued()
          if (changed) this.onChanged()
        },
        (error: unknown) => {
          for (const item of batch) item.reject(error)
        },
      )
      .then(() => {
        this.unsettled--
        this.settled()
      })
  }

  /** Something is gathering for the turn's end or waiting for its outcome. */
  private busy(): boolean {
    return this.writes.pending || this.reads.pending || this.unsettled > 0
  }

  /** Wakes drain() once nothing is gathering or waiting for its outcome. */
  private settled(): void {
    if (this.busy()) return
    for (const resolve of this.idle.splice(0)) resolve()
  }
}
