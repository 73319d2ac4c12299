import type { Database } from 'better-sqlite3'
import { CHUNK, deleteInChunks } from '../delete-in-chunks.js'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'

interface Sweep {
  kind: keyof SweepCounts
  /** A DELETE of at most @limit rows older than @cutoff. */
  sql: string
  cutoff: (policy: RetentionPolicy) => number
}

// Order matters: finished deliveries go before the events they point at. An event is kept while it
// has not been fanned out to subscriptions or any delivery still refers to it, so retention never
// drops an event that is still owed to a receiver. To retain a new kind of row, add an entry here
// (and in the PostgreSQL store).
const SWEEPS: Sweep[] = [
  {
    kind: 'webhook_deliveries',
    sql: `DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries
            WHERE status <> 'pending' AND coalesce(last_attempt_at, created_at) < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
  {
    kind: 'events',
    // seq grows with time, so walking it from the start stops at the first young event.
    sql: `DELETE FROM events WHERE seq IN (
            SELECT e.seq FROM events e
            WHERE e.created_at < @cutoff AND e.fanned_out_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)
            ORDER BY e.seq LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
  {
    kind: 'tokens',
    sql: `DELETE FROM tokens WHERE id IN (
            SELECT id FROM tokens WHERE revoked_at < @cutoff OR expires_at < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.tokensBefore.getTime(),
  },
]

export class SqliteMaintenanceStore implements MaintenanceStore {
  constructor(
    private readonly db: Database,
    /** Runs the checkpoint in the checkpoint thread, off the event loop. */
    private readonly checkpointLog: () => Promise<void>,
  ) {}

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    for (const sweep of SWEEPS) {
      const remove = this.db.prepare(sweep.sql)
      const params = { cutoff: sweep.cutoff(policy), limit: CHUNK }
      counts[sweep.kind] = await deleteInChunks(() => remove.run(params).changes, policy.signal)
    }
    return counts
  }

  /**
   * The automatic checkpoint is mostly PASSIVE: while some reader keeps an old snapshot open it cannot
   * reach the end of the log, and the WAL file never shrinks. This one copies everything back once
   * every reader is on the newest snapshot and rewinds the log, and once writes have paused it also
   * truncates the file to zero bytes (see fileSink's QUIET_MS and checkpoint-passes.js).
   */
  async checkpoint(): Promise<void> {
    if (this.db.memory) return
    await this.checkpointLog()
  }
}
