import type { Database, Statement } from 'better-sqlite3'
import { CHUNK, inChunks } from '../chunks.js'
import type { IdempotencyRecord, IdempotencyStore } from '../types.js'

interface KeyRow {
  token_id: string
  key: string
  fingerprint: string
  status: number
  body: string
  expires_at: number
}

/** Reads Idempotency-Key records; they are written by the plant store, inside the create's transaction. */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly selectOne: Statement
  private readonly purge: Statement

  constructor(db: Database) {
    this.selectOne = db.prepare(
      'SELECT * FROM idempotency_keys WHERE token_id = ? AND key = ? AND expires_at > ?',
    )
    this.purge = db.prepare(
      'DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)',
    )
  }

  async find(tokenId: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
    const row = this.selectOne.get(tokenId, key, now.getTime()) as KeyRow | undefined
    return (
      row && {
        tokenId: row.token_id,
        key: row.key,
        fingerprint: row.fingerprint,
        status: row.status,
        body: row.body,
        expiresAt: new Date(row.expires_at),
      }
    )
  }

  async purgeExpired(now: Date, signal?: AbortSignal): Promise<number> {
    // A day of keys can expire at once (a bulk load with keys, then quiet).
    return inChunks(() => this.purge.run(now.getTime(), CHUNK).changes, signal)
  }
}
