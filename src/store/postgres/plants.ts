import type { Pool, PoolClient } from 'pg'
import type { NewPlant, Plant } from '../../plants/model.js'
import type { CreateExtras, CreateOutcome, PlantStore } from '../types.js'
import { guarded } from './errors.js'
import { inTransaction } from './transaction.js'

interface PendingCreate {
  plant: NewPlant
  extras: CreateExtras | undefined
  resolve: (outcome: CreateOutcome) => void
  reject: (error: unknown) => void
}

interface PlantRow {
  id: string
  name: string
  tag: string | null
}

// Held from the outbox insert until COMMIT, so events get their seq in commit order (see 001_init.sql).
const OUTBOX_LOCK = [0x706c_616e, 2] as const

/** Creates in one batch at most; a larger queue is split over several transactions. */
const MAX_BATCH = 500

function toPlant(row: PlantRow): Plant {
  // int8 arrives as text and goes straight to BigInt: it never passes through a JS number.
  const id = BigInt(row.id)
  return row.tag === null ? { id, name: row.name } : { id, name: row.name, tag: row.tag }
}

/**
 * Plants in PostgreSQL with group commit: creates that arrive while earlier batches are in flight
 * are queued and written together, one transaction and one WAL flush per batch, and each request is
 * answered only after its batch committed. `INSERT … ON CONFLICT DO NOTHING` makes a duplicate (also
 * one inserted by another instance a moment earlier) fail only its own request; a failed commit
 * fails every request of its batch.
 */
export class PostgresPlantStore implements PlantStore {
  private queue: PendingCreate[] = []
  private scheduled = false
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly pool: Pool,
    /** Batches written at the same time; the rest of the pool stays free for reads. */
    private readonly maxConcurrentBatches: number,
  ) {}

  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ plant, extras, resolve, reject })
      this.schedule()
    })
  }

  async get(id: bigint): Promise<Plant | undefined> {
    const result = await guarded(() =>
      this.pool.query<PlantRow>('SELECT id::text AS id, name, tag FROM plants WHERE id = $1', [
        id.toString(),
      ]),
    )
    const row = result.rows[0]
    return row && toPlant(row)
  }

  /** Waits until every accepted create has been answered, so that closing never drops one. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0 || this.queue.length > 0 || this.scheduled) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /** Collects what arrives within this turn of the event loop, then starts a batch if a slot is free. */
  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight.size >= this.maxConcurrentBatches) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      if (this.queue.length === 0 || this.inFlight.size >= this.maxConcurrentBatches) return
      const batch = this.queue.splice(0, MAX_BATCH)
      const flush = this.flush(batch).finally(() => {
        this.inFlight.delete(flush)
        this.schedule()
      })
      this.inFlight.add(flush)
      this.schedule()
    })
  }

  private async flush(batch: PendingCreate[]): Promise<void> {
    let outcomes: CreateOutcome[]
    try {
      outcomes = await inTransaction(this.pool, (client) => this.write(client, batch))
    } catch (error) {
      for (const item of batch) item.reject(error)
      return
    }
    batch.forEach((item, i) => {
      item.resolve(outcomes[i] as CreateOutcome)
    })
  }

  private async write(client: PoolClient, batch: PendingCreate[]): Promise<CreateOutcome[]> {
    // Only the first create of an id in a batch is attempted: a later one is a duplicate whether or
    // not the first succeeds.
    const first = new Map<string, PendingCreate>()
    for (const item of batch) {
      const key = item.plant.id.toString()
      if (!first.has(key)) first.set(key, item)
    }
    const rows = [...first.values()]
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO plants (id, name, tag, created_at, updated_at)
       SELECT id, name, tag, now(), now()
       FROM unnest($1::bigint[], $2::text[], $3::text[]) WITH ORDINALITY AS t(id, name, tag, ord)
       ORDER BY ord
       ON CONFLICT (id) DO NOTHING
       RETURNING id::text AS id`,
      [
        rows.map((r) => r.plant.id.toString()),
        rows.map((r) => r.plant.name),
        rows.map((r) => r.plant.tag ?? null),
      ],
    )
    const created = new Set(inserted.rows.map((r) => r.id))
    const events = rows
      .filter((r) => created.has(r.plant.id.toString()))
      .flatMap((r) => (r.extras?.event ? [r.extras.event] : []))
    if (events.length > 0) {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...OUTBOX_LOCK])
      await client.query(
        `INSERT INTO events (id, type, payload, created_at)
         SELECT id, type, payload, created_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) WITH ORDINALITY
           AS t(id, type, payload, created_at, ord)
         ORDER BY ord`,
        [
          events.map((e) => e.id),
          events.map((e) => e.type),
          events.map((e) => e.payload),
          events.map((e) => e.occurredAt.toISOString()),
        ],
      )
    }
    return batch.map((item) =>
      first.get(item.plant.id.toString()) === item && created.has(item.plant.id.toString())
        ? 'created'
        : 'exists',
    )
  }
}
