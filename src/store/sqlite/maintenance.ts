import type { Database, Statement } from 'better-sqlite3'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'

/** Rows per delete transaction: small enough that a concurrent create never waits noticeably. */
const CHUNK = 1000

interface Sweep {
  kind: string
  table: string
  /** The column the cutoff is compared with; a table without it is left alone. */
  column: string
  /** A DELETE of at most @limit rows, given @now and the policy's cutoffs. */
  sql: string
  cutoff: (policy: RetentionPolicy) => number
}

// Tables other features own; each is swept only where it exists, so the list can name tables that a
// later migration adds. To retain a new kind of row, add an entry here (and in the PostgreSQL store).
const SWEEPS: Sweep[] = [
  {
    kind: 'events',
    table: 'events',
    column: 'created_at',
    // seq grows with time, so walking it from the start stops at the first young event.
    sql: `DELETE FROM events WHERE seq IN (
            SELECT seq FROM events WHERE created_at < @cutoff ORDER BY seq LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
  {
    kind: 'tokens',
    table: 'tokens',
    column: 'revoked_at',
    sql: `DELETE FROM tokens WHERE id IN (
            SELECT id FROM tokens WHERE revoked_at < @cutoff OR expires_at < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.tokensBefore.getTime(),
  },
  {
    kind: 'webhook_deliveries',
    table: 'webhook_deliveries',
    column: 'created_at',
    sql: `DELETE FROM webhook_deliveries WHERE rowid IN (
            SELECT rowid FROM webhook_deliveries WHERE created_at < @cutoff LIMIT @limit)`,
    cutoff: (p) => p.eventsBefore.getTime(),
  },
]

export class SqliteMaintenanceStore implements MaintenanceStore {
  private readonly columnExists: Statement
  private readonly checkpointStatement: Statement

  constructor(private readonly db: Database) {
    this.columnExists = db.prepare('SELECT 1 FROM pragma_table_info(?) WHERE name = ?').pluck()
    this.checkpointStatement = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)')
  }

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    for (const sweep of SWEEPS) {
      if (!this.columnExists.get(sweep.table, sweep.column)) continue
      const remove = this.db.prepare(sweep.sql)
      const params = { cutoff: sweep.cutoff(policy), limit: CHUNK }
      let total = 0
      for (;;) {
        const deleted = remove.run(params).changes
        total += deleted
        if (deleted < CHUNK) break
        // Let requests run between chunks.
        await new Promise((resolve) => setImmediate(resolve))
      }
      counts[sweep.kind] = total
    }
    return counts
  }

  /**
   * The automatic checkpoint is PASSIVE: while some reader keeps an old snapshot open it cannot reach
   * the end of the log, and the WAL file never shrinks. TRUNCATE waits (busy_timeout) for readers, copies
   * everything back and resets the file to zero bytes.
   */
  async checkpoint(): Promise<void> {
    if (this.db.memory) return
    this.checkpointStatement.run()
  }
}
