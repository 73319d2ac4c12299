import type { Pool } from 'pg'
import type { RateLimitStore, Settlement, WindowChange } from '../types.js'
import { guarded } from './errors.js'

/** Windows that ended longer ago than this are deleted by the settlements that follow. */
const KEPT_AFTER_END = "interval '1 minute'"
/**
 * The most ended windows one settlement deletes: twice as many as it may create, and a few more, so
 * that the settlements delete windows faster than they make them, however many keys they carry.
 */
const purgedBy = (changes: number) => 2 * changes + 100

/** What a change is granted on a window reserved `reserved` so far (`requested` etc. from the change). */
function grant(reserved: string, change: string): string {
  return `CASE WHEN ${change}.requested > 0
    THEN least(${change}.requested, greatest(${change}.max_count - ${reserved} - ${change}.overdraft, 0))
    ELSE greatest(${change}.requested, -${reserved}) END`
}

/**
 * One statement per settlement. The upsert's proposed row carries the change itself (its overdraft,
 * request and limit); on a new window it is also the row, granted as on a window with nothing
 * reserved. On an existing one the row is locked while the grant is worked out from what it holds,
 * so two instances settling at once never both take the same allowance. Rows are upserted in key
 * order, so that two settlements that share keys lock them in the same order and cannot deadlock.
 * Ended windows are deleted by whichever settlement finds them unlocked.
 */
const SETTLE = `
WITH purged AS (
  DELETE FROM rate_limit_windows WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM rate_limit_windows WHERE ends_at < now() - ${KEPT_AFTER_END}
    ORDER BY ends_at LIMIT $7 FOR UPDATE SKIP LOCKED))
)
INSERT INTO rate_limit_windows AS w
  (key, window_ms, window_start, ends_at, max_count, reserved, overdraft, requested, granted)
SELECT c.key, c.window_ms, c.window_start, to_timestamp((c.window_start + c.window_ms) / 1000.0),
  c.max_count, c.overdraft + g.granted, c.overdraft, c.requested, g.granted
FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::int[], $6::int[])
  AS c(key, window_ms, window_start, max_count, overdraft, requested),
  LATERAL (SELECT ${grant('0', 'c')} AS granted) AS g
ORDER BY c.key, c.window_ms, c.window_start
ON CONFLICT (key, window_ms, window_start) DO UPDATE SET
  (max_count, overdraft, requested, granted, reserved) = (
    SELECT excluded.max_count, excluded.overdraft, excluded.requested, g.granted,
      w.reserved + excluded.overdraft + g.granted
    FROM (SELECT ${grant('w.reserved', 'excluded')} AS granted) AS g)
RETURNING key, window_ms, window_start, granted, max_count - reserved AS unreserved,
  extract(epoch FROM statement_timestamp()) * 1000 AS now`

interface Row {
  key: string
  window_ms: string
  window_start: string
  granted: number
  unreserved: number
  now: string
}

const identity = (key: string, windowMs: number | string, start: number | string) =>
  `${windowMs}:${start}:${key}`

export class PostgresRateLimitStore implements RateLimitStore {
  constructor(private readonly pool: Pool) {}

  async settle(changes: readonly WindowChange[]): Promise<Settlement> {
    const result = await guarded(() =>
      this.pool.query<Row>(SETTLE, [
        changes.map((c) => c.key),
        changes.map((c) => c.windowMs),
        changes.map((c) => c.start),
        changes.map((c) => c.max),
        changes.map((c) => c.overdraft),
        changes.map((c) => c.requested),
        purgedBy(changes.length),
      ]),
    )
    const byWindow = new Map(
      result.rows.map((row) => [identity(row.key, row.window_ms, row.window_start), row]),
    )
    const grants = changes.map((c) => {
      const row = byWindow.get(identity(c.key, c.windowMs, c.start))
      if (!row) throw new Error(`the settlement returned no row for a window of ${c.key}`)
      return { granted: row.granted, unreserved: row.unreserved }
    })
    const now = result.rows[0]?.now
    return { grants, now: now === undefined ? Date.now() : Number(now) }
  }
}
