import type { Database, Statement } from 'better-sqlite3'
import type { NewPlant, Plant } from '../../plants/model.js'
import type { CreateExtras, CreateOutcome, PlantStore } from '../types.js'

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

  private flush(): void {
    const batch = this.queue
    this.queue = []
    const outcomes: CreateOutcome[] = []
    const now = Date.now()
    let wroteEvents = false
    try {
      this.begin.run()
      try {
        for (const { plant, extras } of batch) {
          try {
            this.insert.run({ id: plant.id, name: plant.name, tag: plant.tag ?? null, now })
          } catch (error) {
            // A duplicate fails only its own request; SQLite undoes just that statement.
            if (!isUniqueViolation(error)) throw error
            outcomes.push('exists')
            continue
          }
          const event = extras?.event
          if (event) {
            this.insertEvent.run({
              id: event.id,
              type: event.type,
              payload: event.payload,
              createdAt: event.occurredAt.getTime(),
            })
            wroteEvents = true
          }
          outcomes.push('created')
        }
        this.commit()
      } catch (error) {
        if (this.db.inTransaction) this.rollback.run()
        throw error
      }
    } catch (error) {
      for (const item of batch) item.reject(error)
      return
    }
    for (let i = 0; i < batch.length; i++) batch[i]?.resolve(outcomes[i] as CreateOutcome)
    if (wroteEvents) this.onEventsCommitted()
  }
}
