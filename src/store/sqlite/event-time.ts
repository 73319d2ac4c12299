// Events by time without an index of their times: a create's outbox row has only its integer key.
import type { Database, Statement } from 'better-sqlite3'

/**
 * Finds the first event dated at or after a time by bisecting seq: events are dated under the write
 * lock in the order their seq is taken, so their dates ascend with seq (up to a clock stepping back).
 * Each probe is one descent of the table's own B-tree, some fifty at most; an index of the times
 * would cost every create an entry for what only replays and retention sweeps ask.
 */
export class EventTimes {
  private readonly firstSeq: Statement
  private readonly lastSeq: Statement
  private readonly atOrAfter: Statement

  constructor(db: Database) {
    // Each alone is one descent to an end of the key; asked together, SQLite scans the table.
    this.firstSeq = db.prepare('SELECT min(seq) FROM events').pluck()
    this.lastSeq = db.prepare('SELECT max(seq) FROM events').pluck()
    this.atOrAfter = db.prepare('SELECT seq, created_at FROM events WHERE seq >= ? ORDER BY seq LIMIT 1')
  }

  /** The seq of the first event dated at or after `at` (epoch ms), or undefined when none is. */
  firstSince(at: number): number | undefined {
    const first = this.firstSeq.get() as number | null
    const last = this.lastSeq.get() as number | null
    if (first === null || last === null) return undefined
    // The answer is the first event at or after seq `lo`; `hi` past the last event means none.
    let lo = first
    let hi = last + 1
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2)
      const row = this.atOrAfter.get(mid) as { created_at: number }
      if (row.created_at >= at) hi = mid
      else lo = mid + 1
    }
    if (lo > last) return undefined
    return (this.atOrAfter.get(lo) as { seq: number }).seq
  }

  /** One past the last seq of an event dated before `at`, as far as bisecting can tell (see firstSince). */
  endBefore(at: number): number {
    const first = this.firstSince(at)
    if (first !== undefined) return first
    return ((this.lastSeq.get() as number | null) ?? 0) + 1
  }
}
