import type { Pool } from 'pg'
import type { LeaseStore } from '../types.js'
import { guarded } from './errors.js'

/**
 * Named leases in PostgreSQL. Taking one is a single `INSERT … ON CONFLICT DO UPDATE … WHERE`: the
 * conflicting row is locked while its WHERE (free, expired or ours) is checked, so of two instances
 * racing for it exactly one gets a row back.
 */
export class PostgresLeaseStore implements LeaseStore {
  constructor(private readonly pool: Pool) {}

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const result = await guarded(() =>
      this.pool.query(
        // A renewal keeps acquired_at; a takeover (free or expired row) starts it again.
        `INSERT INTO leases (name, holder, expires_at, acquired_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
           acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END
         WHERE leases.holder = excluded.holder OR leases.expires_at <= $4
         RETURNING holder`,
        [name, holder, new Date(now.getTime() + ttlMs), now],
      ),
    )
    return result.rowCount === 1
  }

  async release(name: string, holder: string): Promise<void> {
    await guarded(() => this.pool.query('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder]))
  }
}
