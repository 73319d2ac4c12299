import type { Database, Statement } from 'better-sqlite3'
import type { LeaseStore } from '../types.js'
import { retryWhileBusy } from './busy.js'

/**
 * Named leases in SQLite. Taking one is a single upsert whose WHERE is the compare-and-set, run in
 * a `BEGIN IMMEDIATE` transaction: the write lock is held from the read of the row to its write, so
 * two processes on one file cannot both see it free.
 */
export class SqliteLeaseStore implements LeaseStore {
  private readonly take: Statement
  private readonly free: Statement

  constructor(private readonly db: Database) {
    // A renewal keeps acquired_at; a takeover (free or expired row) starts it again.
    this.take = db.prepare(
      `INSERT INTO leases (name, holder, expires_at, acquired_at) VALUES (@name, @holder, @until, @now)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
         acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END
       WHERE leases.holder = excluded.holder OR leases.expires_at <= @now
       RETURNING holder`,
    )
    this.free = db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?')
  }

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const at = now.getTime()
    const taken = this.db.transaction(() => this.take.get({ name, holder, until: at + ttlMs, now: at }))
    return (await retryWhileBusy(() => taken.immediate())) !== undefined
  }

  async release(name: string, holder: string): Promise<void> {
    const freed = this.db.transaction(() => this.free.run(name, holder))
    await retryWhileBusy(() => freed.immediate())
  }
}
