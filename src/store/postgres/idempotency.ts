import type { Pool } from 'pg'
import { CHUNK, inChunks } from '../chunks.js'
import type { IdempotencyRecord, IdempotencyStore } from '../types.js'
import { guarded } from './errors.js'

interface KeyRow {
  token_id: string
  key: string
  fingerprint: string
  status: number
  body: string
  expires_at: Date
}

/** Reads Idempotency-Key records; they are written by the plant store, inside the create's transaction. */
export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(private readonly pool: Pool) {}

  async find(tokenId: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const result = await guarded(() =>
      this.pool.query<KeyRow>(
        'SELECT * FROM idempotency_keys WHERE token_id = $1 AND key = $2 AND expires_at > $3',
        [tokenId, key, now],
      ),
    )
    const row = result.rows[0]
    return (
      row && {
        tokenId: row.token_id,
        key: row.key,
        fingerprint: row.fingerprint,
        status: row.status,
        body: row.body,
        expiresAt: row.expires_at,
      }
    )
  }

  async purgeExpired(now: Date, signal?: AbortSignal): Promise<number> {
    // Chunks, as the retention sweep's: one DELETE of a day of expired keys may run past
    // --database-timeout, and then fails, whole, on every run. A key a create is taking over right
    // now is skipped, not waited for: the sweep would lock its rows in scan order, a batch takes its
    // keys in key order, and the two could deadlock. The next sweep gets it if it is still expired.
    const deleteChunk = async () => {
      const result = await guarded(() =>
        this.pool.query(
          `DELETE FROM idempotency_keys WHERE (token_id, key) IN (
             SELECT token_id, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2
             FOR UPDATE SKIP LOCKED)`,
          [now, CHUNK],
        ),
      )
      return result.rowCount ?? 0
    }
    return inChunks(deleteChunk, signal)
  }
}
