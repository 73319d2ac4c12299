import type { Pool } from 'pg'
import { CHUNK, inChunks } from '../chunks.js'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'
import { inTransaction } from './transaction.js'

/**
 * How long a chunk waits for a lock before the sweep gives up until its next run. Housekeeping must
 * not queue behind someone else's long lock: a waiting DELETE holds up every writer queued after it,
 * and a stopping process waits for it.
 */
const LOCK_TIMEOUT = '2s'

interface Sweep {
  kind: keyof SweepCounts
  /** Deletes at most $2 rows older than $1; responds with how many, as `n`. */
  sql: string
  cutoff: (policy: RetentionPolicy) => Date
}

/** A DELETE as a sweep's statement, which responds with how many rows it deleted. */
function counted(deletion: string): string {
  return `WITH gone AS (${deletion} RETURNING 1) SELECT count(*)::int AS n FROM gone`
}

// The same sweeps, in the same order, as the SQLite store's: finished deliveries go before the events
// they point at, and an event is kept while it has not been fanned out or a delivery still refers to
// it, so retention never drops an event that is still owed to a receiver.
const SWEEPS: Sweep[] = [
  {
    kind: 'webhook_deliveries',
    sql: counted(`DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries
            WHERE status <> 'pending' AND coalesce(last_attempt_at, created_at) < $1 LIMIT $2)`),
    cutoff: (p) => p.eventsBefore,
  },
  {
    kind: 'events',
    // seq grows with time, so walking it from the start stops at the first young event. An event a
    // replay is queueing (it holds the row) is skipped: the delivery it gets would fail this delete.
    // The highest seq deleted moves the change feed's retention horizon in the same statement.
    sql: `WITH gone AS (
            DELETE FROM events WHERE seq IN (
              SELECT e.seq FROM events e
              WHERE e.created_at < $1 AND e.fanned_out_at IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)
              ORDER BY e.seq LIMIT $2 FOR UPDATE OF e SKIP LOCKED)
            RETURNING seq
          ), moved AS (
            UPDATE retention_horizon h SET seq = g.top FROM (SELECT max(seq) AS top FROM gone) g
            WHERE g.top > h.seq
          )
          SELECT count(*)::int AS n FROM gone`,
    cutoff: (p) => p.eventsBefore,
  },
  {
    kind: 'tokens',
    sql: counted(`DELETE FROM tokens WHERE id IN (
            SELECT id FROM tokens WHERE revoked_at < $1 OR expires_at < $1 LIMIT $2)`),
    cutoff: (p) => p.tokensBefore,
  },
]

export class PostgresMaintenanceStore implements MaintenanceStore {
  constructor(private readonly pool: Pool) {}

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    for (const sweep of SWEEPS) {
      // Each chunk is its own short transaction, so writers never wait long.
      const deleteChunk = async () => {
        const deleted = await inTransaction(this.pool, async (client) => {
          await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`)
          return client.query<{ n: number }>(sweep.sql, [sweep.cutoff(policy), CHUNK])
        })
        return deleted.rows[0]?.n ?? 0
      }
      counts[sweep.kind] = await inChunks(deleteChunk, policy.signal)
    }
    return counts
  }

  /** PostgreSQL recycles its own write-ahead log (checkpoints, max_wal_size): nothing to do. */
  async checkpoint(): Promise<void> {}
}
