// One group-commit batch written in one transaction.
import type { Database } from 'better-sqlite3'
import type { CreateOutcome } from '../types.js'
import { type OutboxRow, prepareOutbox } from './fan-out.js'

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** A create as the batch writer receives it. */
export interface BatchRow {
  id: bigint
  name: string
  tag: string | null
  /** The create's event, built at the time its batch holds the write lock (see CreateExtras). */
  event: ((at: number) => OutboxRow) | undefined
  /** Stored with the plant; an unexpired record under the same (tokenId, key) makes it 'key-taken'. */
  idempotency:
    | { tokenId: string; key: string; fingerprint: string; status: number; body: string; expiresAt: number }
    | undefined
}

/** What a committed batch did: each row's outcome, and whether it queued any webhook delivery. */
export interface BatchResult {
  outcomes: CreateOutcome[]
  queued: boolean
}

/** Writes every row in one transaction; throws (having rolled back) when the transaction fails. */
export type WriteBatch = (batch: BatchRow[], now: number) => BatchResult

/** Prepares the statements once; the returned function writes one batch and returns what it did. */
export function prepareBatchWriter(db: Database): WriteBatch {
  const insert = db.prepare(
    'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  )
  const outbox = prepareOutbox(db)
  // An expired record under the same key is overwritten; an unexpired one leaves changes at 0.
  const insertKey = db.prepare(
    `INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at)
     VALUES (@tokenId, @key, @fingerprint, @status, @body, @expiresAt)
     ON CONFLICT (token_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
       status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= @now`,
  )
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT create_one')
  const releaseSavepoint = db.prepare('RELEASE create_one')
  const rollbackSavepoint = db.prepare('ROLLBACK TO create_one')

  /** The batch's outbox events, first and last seq; reset by each batch. */
  let firstSeq = 0
  let lastSeq = 0

  /** One create inside the batch's transaction; a refusal undoes only its own writes. */
  function insertOne(row: BatchRow, now: number, eventsAt: number): CreateOutcome {
    const record = row.idempotency
    if (record) savepoint.run()
    try {
      insert.run(row.id, row.name, row.tag, now, now)
    } catch (error) {
      // A duplicate fails only its own request: SQLite undoes just that statement.
      if (record) releaseSavepoint.run()
      if (!UNIQUE_VIOLATIONS.has((error as { code?: string }).code ?? '')) throw error
      return 'exists'
    }
    if (record) {
      const stored = insertKey.run({ ...record, now })
      if (stored.changes === 0) {
        rollbackSavepoint.run()
        releaseSavepoint.run()
        return 'key-taken'
      }
      releaseSavepoint.run()
    }
    if (row.event) {
      lastSeq = outbox.write(row.event(eventsAt), now)
      if (firstSeq === 0) firstSeq = lastSeq
    }
    return 'created'
  }

  return function writeBatch(batch, now) {
    const outcomes: CreateOutcome[] = []
    let queued = false
    firstSeq = 0
    begin.run()
    // Read once the write lock is held, so no earlier commit (one that freed an id, say) is dated later.
    const eventsAt = Date.now()
    try {
      for (const row of batch) outcomes.push(insertOne(row, now, eventsAt))
      // Seqs only grow, and no other connection writes within this transaction: the batch's events
      // are exactly those in [firstSeq, lastSeq].
      if (firstSeq !== 0) queued = outbox.fanOut(firstSeq, lastSeq) > 0
      commit.run()
    } catch (error) {
      if (db.inTransaction) rollback.run()
      throw error
    }
    return { outcomes, queued }
  }
}
