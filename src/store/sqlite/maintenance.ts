import type { Database, Statement } from 'better-sqlite3'
import { CHUNK, inChunks } from '../chunks.js'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'
import { EventTimes } from './event-time.js'

interface Sweep {
  kind: keyof SweepCounts
  /** A DELETE of at most @limit rows older than @cutoff (for events, of a seq below @end). */
  sql: string
  cutoff: (policy: RetentionPolicy) => number
}

// Order matters: finished deliveries go before the events they point at. An event is kept while it
// has not been fanned out to subscriptions or any delivery still refers to it, so retention never
// drops an event that is still owed to a receiver. To retain a new kind of row, add an entry here
// (and in the PostgreSQL store).
export const SWEEPS: readonly Sweep[] = [
  {
    kind: 'webhook_deliveries',
    // A delivery finishes after it was made, so one finished before the cutoff was made before it too:
    // each subscription's deliveries are walked by (webhook_id, created_at) up to the cutoff. Without
    // that bound the table would be scanned whole at every sweep, even one that deletes nothing, on the
    // event loop. CROSS JOIN keeps SQLite from scanning deliveries first.
    sql: `DELETE FROM webhook_deliveries WHERE id IN (
            SELECT d.id FROM webhooks w CROSS JOIN webhook_deliveries d
              ON d.webhook_id = w.id AND d.created_at < @cutoff
            WHERE d.status <> 'pending' AND coalesce(d.last_attempt_at, d.created_at) < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
  {
    kind: 'events',
    // Walked by seq up to @end, the first event dated at or after the cutoff (EventTimes): unbounded,
    // a sweep that deletes nothing would read every event, on the event loop. An old event past @end (dated
    // out of seq order) goes at a later sweep, once the end has passed it. The seqs deleted come back
    // to move the retention horizon (recordHorizon) in the same transaction.
    sql: `DELETE FROM events WHERE seq IN (
            SELECT e.seq FROM events e
            WHERE e.seq < @end AND e.created_at < @cutoff AND e.fanned_out_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)
            ORDER BY e.seq LIMIT @limit) RETURNING seq`,
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
  private readonly times: EventTimes
  private readonly raiseHorizon: Statement

  constructor(private readonly db: Database) {
    this.times = new EventTimes(db)
    this.raiseHorizon = db.prepare('UPDATE change_horizon SET seq = ? WHERE seq < ?')
  }

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    for (const sweep of SWEEPS) {
      const remove = this.db.prepare(sweep.sql)
      const cutoff = sweep.cutoff(policy)
      if (sweep.kind === 'events') {
        const params = { cutoff, limit: CHUNK, end: this.times.endBefore(cutoff) }
        const chunk = this.db.transaction(() => this.recordHorizon(remove.pluck().all(params) as number[]))
        counts.events = await inChunks(() => chunk.immediate(), policy.signal)
      } else {
        const params = { cutoff, limit: CHUNK }
        counts[sweep.kind] = await inChunks(() => remove.run(params).changes, policy.signal)
      }
    }
    return counts
  }

  /**
   * Raises the retention horizon to the highest of the seqs just deleted, inside their transaction:
   * the horizon is never behind what the feed has lost. Returns how many were deleted.
   */
  private recordHorizon(deleted: number[]): number {
    if (deleted.length === 0) return 0
    const highest = Math.max(...deleted)
    this.raiseHorizon.run(highest, highest)
    return deleted.length
  }

  /**
   * SQLite's automatic checkpoint is PASSIVE: it never waits for a reader, so while readers keep
   * older snapshots it may not reach the end of the log, and it never shrinks the file. This one
   * waits (up to the busy timeout) until it has copied the whole log back, then truncates it.
   */
  async checkpoint(): Promise<void> {
    if (this.db.memory) return
    this.db.pragma('wal_checkpoint(TRUNCATE)')
  }
}
