import type { Pool } from 'pg'
import type { MaintenanceStore, RetentionPolicy, SweepCounts } from '../types.js'
import { guarded } from './errors.js'

/** Rows per delete transaction: small enough that a concurrent create never waits noticeably. */
const CHUNK = 1000

interface Sweep {
  kind: string
  table: string
  /** The column the cutoff is compared with; a table without it is left alone. */
  column: string
  /** A DELETE of at most $2 rows older than $1, given the tables that exist. */
  sql: string | ((tables: ReadonlySet<string>) => string)
  cutoff: (policy: RetentionPolicy) => Date
}

// The same kinds as the SQLite store's, each swept only where its table exists; deliveries go before
// the events they refer to.
const SWEEPS: Sweep[] = [
  {
    kind: 'tokens',
    table: 'tokens',
    column: 'revoked_at',
    sql: `DELETE FROM tokens WHERE id IN (
            SELECT id FROM tokens WHERE revoked_at < $1 OR expires_at < $1 LIMIT $2)`,
    cutoff: (p) => p.tokensBefore,
  },
  {
    kind: 'webhook_deliveries',
    table: 'webhook_deliveries',
    column: 'created_at',
    sql: `DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries WHERE created_at < $1 LIMIT $2)`,
    cutoff: (p) => p.eventsBefore,
  },
  {
    kind: 'events',
    table: 'events',
    column: 'created_at',
    // Swept after the deliveries, and never an event a delivery still refers to (a foreign key).
    sql: (tables) => `DELETE FROM events WHERE seq IN (
            SELECT seq FROM events e WHERE created_at < $1
            ${tables.has('webhook_deliveries') ? 'AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq)' : ''}
            ORDER BY seq LIMIT $2)`,
    cutoff: (p) => p.eventsBefore,
  },
]

export class PostgresMaintenanceStore implements MaintenanceStore {
  constructor(private readonly pool: Pool) {}

  async sweep(policy: RetentionPolicy): Promise<SweepCounts> {
    const counts: SweepCounts = {}
    const found = await guarded(() =>
      this.pool.query<{ table_name: string; column_name: string }>(
        'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()',
      ),
    )
    const tables = new Set(found.rows.map((r) => r.table_name))
    const columns = new Set(found.rows.map((r) => `${r.table_name}.${r.column_name}`))
    for (const sweep of SWEEPS) {
      if (!columns.has(`${sweep.table}.${sweep.column}`)) continue
      const sql = typeof sweep.sql === 'string' ? sweep.sql : sweep.sql(tables)
      let total = 0
      for (;;) {
        // Each chunk is its own short transaction (autocommit), so writers never wait long.
        const deleted = await guarded(() => this.pool.query(sql, [sweep.cutoff(policy), CHUNK]))
        total += deleted.rowCount ?? 0
        if ((deleted.rowCount ?? 0) < CHUNK) break
      }
      counts[sweep.kind] = total
    }
    return counts
  }

  /** PostgreSQL recycles its own write-ahead log (checkpoints, max_wal_size): nothing to do. */
  async checkpoint(): Promise<void> {}
}
