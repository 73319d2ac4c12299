import type { Database, Statement } from 'better-sqlite3'
import type { NewPlant, Plant } from '../../plants/model.js'
import type { CreateExtras, CreateOutcome, PlantStore } from '../types.js'
import type { BatchRow } from './batch.js'
import type { BatchSink } from './writer.js'

interface PendingCreate {
  row: BatchRow
  resolve: (outcome: CreateOutcome) => void
  reject: (error: unknown) => void
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
 * While a batch commits (in the writer thread, for a file), the next one gathers: a batch holds every
 * create that arrived during the previous commit.
 */
export class SqlitePlantStore implements PlantStore {
  private queue: PendingCreate[] = []
  private scheduled = false
  private writing: Promise<void> | undefined
  private readonly idle: Array<() => void> = []
  private readonly selectOne: Statement

  constructor(
    db: Database,
    private readonly sink: BatchSink,
  ) {
    this.selectOne = db.prepare('SELECT id, name, tag FROM plants WHERE id = ?').safeIntegers(true)
  }

  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome> {
    const event = extras?.event
    const row: BatchRow = {
      id: plant.id,
      name: plant.name,
      tag: plant.tag ?? null,
      event: event && {
        id: event.id,
        type: event.type,
        payload: event.payload,
        createdAt: event.occurredAt.getTime(),
      },
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject })
      this.schedule()
    })
  }

  async get(id: bigint): Promise<Plant | undefined> {
    const row = this.selectOne.get(id) as PlantRow | undefined
    return row && toPlant(row)
  }

  /** Resolves once every accepted create has been answered, so that closing never drops one. */
  async drain(): Promise<void> {
    while (this.scheduled || this.writing || this.queue.length > 0) {
      await new Promise<void>((resolve) => this.idle.push(resolve))
    }
  }

  /** Flushes after the current turn, so that every create of the turn joins the batch. */
  private schedule(): void {
    if (this.scheduled || this.writing) return
    this.scheduled = true
    setImmediate(() => this.flush())
  }

  private flush(): void {
    this.scheduled = false
    const batch = this.queue
    this.queue = []
    if (batch.length === 0) {
      this.settled()
      return
    }
    let write: Promise<CreateOutcome[]>
    try {
      write = this.sink.write(
        batch.map((item) => item.row),
        Date.now(),
      )
    } catch (error) {
      write = Promise.reject(error)
    }
    this.writing = write.then(
      (outcomes) => {
        for (let i = 0; i < batch.length; i++) batch[i]?.resolve(outcomes[i] as CreateOutcome)
      },
      (error: unknown) => {
        for (const item of batch) item.reject(error)
      },
    )
    void this.writing.then(() => {
      this.writing = undefined
      if (this.queue.length > 0) this.schedule()
      else this.settled()
    })
  }

  private settled(): void {
    for (const resolve of this.idle.splice(0)) resolve()
  }
}
