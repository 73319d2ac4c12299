import type { Database } from 'better-sqlite3'
import { CHUNK, inChunks } from '../chunks.js'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'
import { unsyncedWrites } from './unsynced.js'

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
export const SWEEPS: readonly Sweep[] = [
  {
    kind: 'webhook_deliveries',
    // A delivery finishes after it was made, so one finished before the cutoff was made before it too:
    // each subscription's deliveries are walked by (webhook_id, created_at) up to the cutoff. Without
    // that bound the table was scanned whole at every sweep, even one that deleted nothing (39 ms at
    // 373,000 deliveries, on the event loop). CROSS JOIN keeps SQLite from scanning deliveries first.
    sql: `DELETE FROM webhook_deliveries WHERE id IN (
            SELECT d.id FROM webhooks w CROSS JOIN webhook_deliveries d
              ON d.webhook_id = w.id AND d.created_at < @cutoff
            WHERE d.status <> 'pending' AND coalesce(d.last_attempt_at, d.created_at) < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
  {
    kind: 'events',
    // Walked by time (events_by_time) up to the cutoff. Ordered by seq, SQLite walked the table from
    // its start and never knew where the old events end: a sweep that deleted nothing read every
    // event (166–194 ms at 1.29 million, on the event loop).
    sql: `DELETE FROM events WHERE seq IN (
            SELECT e.seq FROM events e
            WHERE e.created_at < @cutoff AND e.fanned_out_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)
            ORDER BY e.created_at LIMIT @limit)`,
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
  ) {
    this.unsynced = unsyncedWrites(db)
  }

  private readonly unsynced: <T>(work: () => T) => T

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    for (const sweep of SWEEPS) {
      const remove = this.db.prepare(sweep.sql)
      const params = { cutoff: sweep.cutoff(policy), limit: CHUNK }
      // A delete lost to a power cut is made again by the next sweep: its chunks need no fsync of
      // their own on the event loop (2–4 ms each with one, under a create load).
      counts[sweep.kind] = await inChunks(
        () => this.unsynced(() => remove.run(params).changes),
        policy.signal,
      )
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
