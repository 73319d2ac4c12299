import type { PoolClient } from 'pg'

/** The advisory lock's two keys. */
export const OUTBOX_LOCK = [0x706c_616e, 2] as const

/**
 * Taken before a transaction inserts into the outbox and held until it ends, so that events get their
 * seq in commit order (see 001_init.sql): whoever has seen seq N never finds a lower one appear
 * later. A subscription starts after the highest seq it sees; an event that committed later with a
 * lower seq would never reach it.
 */
export async function lockOutbox(client: PoolClient): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...OUTBOX_LOCK])
}
