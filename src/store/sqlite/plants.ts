import type { Database, Statement } from 'better-sqlite3'
import { INT64_MAX, INT64_MIN } from '../../plants/int64.js'
import type { NewPlant, Plant } from '../../plants/model.js'
import type {
  CreateExtras,
  CreateOutcome,
  ImportItem,
  ImportOutcome,
  ListQuery,
  OutboxEvent,
  PlantChange,
  PlantStore,
  VersionedPlant,
  WriteOptions,
  WriteResult,
} from '../types.js'

interface PendingCreate {
  plant: NewPlant
  extras: CreateExtras | undefined
  resolve: (outcome: CreateOutcome) => void
  reject: (error: unknown) => void
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE'
}

interface PlantRow {
  id: bigint
  name: string
  tag: string | null
}

interface VersionedRow extends PlantRow {
  version: bigint
}

function toPlant(row: PlantRow): Plant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag }
}

/**
 * Plants in SQLite with group commit: every create that arrives within one turn of the event loop
 * joins one transaction, and each is answered only after that transaction has committed (with
 * synchronous=FULL, after the fsync). One fsync then pays for a whole batch instead of one request.
 */
export class SqlitePlantStore implements PlantStore {
  private queue: PendingCreate[] = []
  private flushing: Promise<void> | undefined
  private readonly insert: Statement
  private readonly insertEvent: Statement
  private readonly begin: Statement
  private readonly commitStatement: Statement
  private readonly rollback: Statement
  private readonly selectOne: Statement
  private readonly selectVersioned: Statement
  private readonly insertKey: Statement
  private readonly savepoint: Statement
  private readonly releaseSavepoint: Statement
  private readonly rollbackSavepoint: Statement
  private readonly pageAll: Statement
  private readonly pageByTag: Statement
  private readonly updateRow: Statement
  private readonly deleteRow: Statement
  private readonly insertIfAbsent: Statement

  /** Set when the open transaction wrote an event; told to the listener once it commits. */
  private eventsWritten = false

  constructor(
    private readonly db: Database,
    /** Told after a commit that wrote outbox events. */
    private readonly onEventsCommitted: () => void = () => {},
  ) {
    this.insert = db.prepare(
      'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (@id, @name, @tag, @now, @now)',
    )
    this.insertEvent = db.prepare(
      'INSERT INTO events (id, type, payload, created_at) VALUES (@id, @type, @payload, @createdAt)',
    )
    this.begin = db.prepare('BEGIN IMMEDIATE')
    this.commitStatement = db.prepare('COMMIT')
    this.rollback = db.prepare('ROLLBACK')
    this.selectOne = db.prepare('SELECT id, name, tag FROM plants WHERE id = ?').safeIntegers(true)
    this.insertIfAbsent = db.prepare(
      'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (@id, @name, @tag, @now, @now) ON CONFLICT (id) DO NOTHING',
    )
    this.selectVersioned = db
      .prepare('SELECT id, name, tag, version FROM plants WHERE id = ?')
      .safeIntegers(true)
    // An expired record under the same key is overwritten; an unexpired one leaves changes at 0.
    this.insertKey = db.prepare(
      `INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at)
       VALUES (@tokenId, @key, @fingerprint, @status, @body, @expiresAt)
       ON CONFLICT (token_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
         status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
       WHERE idempotency_keys.expires_at <= @now`,
    )
    this.savepoint = db.prepare('SAVEPOINT create_one')
    this.releaseSavepoint = db.prepare('RELEASE create_one')
    this.rollbackSavepoint = db.prepare('ROLLBACK TO create_one')
    // Keyset pagination: each page is one descent of the id (or tag, id) B-tree, at any depth.
    this.pageAll = db
      .prepare('SELECT id, name, tag FROM plants WHERE id >= @from ORDER BY id LIMIT @limit')
      .safeIntegers(true)
    this.pageByTag = db
      .prepare('SELECT id, name, tag FROM plants WHERE tag = @tag AND id >= @from ORDER BY id LIMIT @limit')
      .safeIntegers(true)
    this.updateRow = db.prepare(
      'UPDATE plants SET name = @name, tag = @tag, version = version + 1, updated_at = @now WHERE id = @id',
    )
    this.deleteRow = db.prepare('DELETE FROM plants WHERE id = ?')
  }

  async importBatch(items: readonly ImportItem[]): Promise<ImportOutcome[]> {
    const now = Date.now()
    const run = this.db.transaction(() =>
      items.map(({ plant, event }): ImportOutcome => {
        const tag = plant.tag ?? null
        if (this.insertIfAbsent.run({ id: plant.id, name: plant.name, tag, now }).changes === 0) {
          const existing = this.selectOne.get(plant.id) as PlantRow
          return existing.name === plant.name && existing.tag === tag ? 'unchanged' : 'conflict'
        }
        if (event) {
          this.insertEvent.run({
            id: event.id,
            type: event.type,
            payload: event.payload,
            createdAt: event.occurredAt.getTime(),
          })
        }
        return 'created'
      }),
    )
    return run.immediate()
  }

  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ plant, extras, resolve, reject })
      if (this.queue.length === 1) {
        this.flushing = new Promise((done) => setImmediate(() => done(this.flush())))
      }
    })
  }

  async get(id: bigint): Promise<Plant | undefined> {
    const row = this.selectOne.get(id) as PlantRow | undefined
    return row && toPlant(row)
  }

  async read(id: bigint): Promise<VersionedPlant | undefined> {
    const row = this.selectVersioned.get(id) as VersionedRow | undefined
    return row && { plant: toPlant(row), version: Number(row.version) }
  }

  async list(query: ListQuery): Promise<Plant[]> {
    // `id >= from` rather than `id > after`: with no cursor the page starts at the smallest int64.
    if (query.after === INT64_MAX) return []
    const from = query.after === undefined ? INT64_MIN : query.after + 1n
    const rows =
      query.tag === undefined
        ? this.pageAll.all({ from, limit: query.limit })
        : this.pageByTag.all({ from, limit: query.limit, tag: query.tag })
    return (rows as PlantRow[]).map(toPlant)
  }

  async update(id: bigint, change: PlantChange, options: WriteOptions = {}): Promise<WriteResult> {
    return this.writeOne(id, options, (current) => {
      const next: Plant = { id, name: change.name ?? current.name }
      const tag = change.tag === undefined ? current.tag : change.tag
      if (tag !== null && tag !== undefined) next.tag = tag
      if (next.name === current.name && next.tag === current.tag) return undefined
      this.updateRow.run({ id, name: next.name, tag: next.tag ?? null, now: Date.now() })
      return next
    })
  }

  async remove(id: bigint, options: WriteOptions = {}): Promise<WriteResult> {
    const result = this.writeOne(id, options, (current) => {
      this.deleteRow.run(id)
      return current
    })
    // The plant as it was, with the version it had: a deleted plant has no next version.
    return result.outcome === 'done' ? { ...result, version: result.version - 1 } : result
  }

  /** Waits for the batch in flight, so that closing never drops an accepted create. */
  async drain(): Promise<void> {
    while (this.flushing) {
      const current = this.flushing
      await current
      if (this.flushing === current) this.flushing = undefined
    }
  }

  /** Separate so a test can make the commit fail and see every request of the batch fail with it. */
  protected commit(): void {
    this.commitStatement.run()
  }

  /** Check version, write, record the event: one IMMEDIATE transaction, so no change slips between. */
  private writeOne(
    id: bigint,
    options: WriteOptions,
    apply: (current: Plant) => Plant | undefined,
  ): WriteResult {
    const run = this.db.transaction((): WriteResult => {
      const row = this.selectVersioned.get(id) as VersionedRow | undefined
      if (!row) return { outcome: 'missing' }
      const version = Number(row.version)
      if (options.expectedVersion !== undefined && options.expectedVersion !== version) {
        return { outcome: 'version-mismatch' }
      }
      const current = toPlant(row)
      const plant = apply(current)
      // A change that changes nothing keeps the version (and so the ETag) and emits no event.
      if (plant === undefined) return { outcome: 'done', plant: current, version }
      if (options.event) this.writeEvent(options.event(plant))
      return { outcome: 'done', plant, version: version + 1 }
    })
    this.eventsWritten = false
    const result = run.immediate()
    this.announceEvents()
    return result
  }

  private announceEvents(): void {
    if (!this.eventsWritten) return
    this.eventsWritten = false
    this.onEventsCommitted()
  }

  private writeEvent(event: OutboxEvent): void {
    this.eventsWritten = true
    this.insertEvent.run({
      id: event.id,
      type: event.type,
      payload: event.payload,
      createdAt: event.occurredAt.getTime(),
    })
  }

  private flush(): void {
    const batch = this.queue
    this.queue = []
    const outcomes: CreateOutcome[] = []
    const now = Date.now()
    this.eventsWritten = false
    try {
      this.begin.run()
      try {
        for (const { plant, extras } of batch) {
          outcomes.push(this.insertOne(plant, extras, now))
        }
        this.commit()
      } catch (error) {
        if (this.db.inTransaction) this.rollback.run()
        throw error
      }
    } catch (error) {
      this.eventsWritten = false
      for (const item of batch) item.reject(error)
      return
    }
    for (let i = 0; i < batch.length; i++) batch[i]?.resolve(outcomes[i] as CreateOutcome)
    this.announceEvents()
  }

  /** One create inside the batch's transaction; a refusal undoes only its own writes. */
  private insertOne(plant: NewPlant, extras: CreateExtras | undefined, now: number): CreateOutcome {
    const record = extras?.idempotency
    if (record) this.savepoint.run()
    try {
      this.insert.run({ id: plant.id, name: plant.name, tag: plant.tag ?? null, now })
    } catch (error) {
      // A duplicate fails only its own request; SQLite undoes just that statement.
      if (record) this.releaseSavepoint.run()
      if (!isUniqueViolation(error)) throw error
      return 'exists'
    }
    if (record) {
      const stored = this.insertKey.run({
        tokenId: record.tokenId,
        key: record.key,
        fingerprint: record.fingerprint,
        status: record.status,
        body: record.body,
        expiresAt: record.expiresAt.getTime(),
        now,
      })
      if (stored.changes === 0) {
        this.rollbackSavepoint.run()
        this.releaseSavepoint.run()
        return 'key-taken'
      }
      this.releaseSavepoint.run()
    }
    if (extras?.event) this.writeEvent(extras.event)
    return 'created'
  }
}
