// One group-commit batch written in one transaction.
import type { Span } from '@opentelemetry/api'
import type { Database } from 'better-sqlite3'
import { foldName } from '../../plants/fold.js'
import { changedPlant } from '../../plants/model.js'
import type { CreateOutcome, PlantChange, WriteOptions, WriteResult } from '../types.js'
import { type OutboxRow, outboxRow, prepareOutbox } from './fan-out.js'
import { INSERT_PLANT, plantRowValues, toPlant, type VersionedRow } from './plant-row.js'

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** A write as the batch writer receives it: a create, or a change of one stored plant. */
export type BatchRow = CreateRow | ChangeRow

/** A create as the batch writer receives it. */
export interface CreateRow {
  kind: 'create'
  id: bigint
  name: string
  tag: string | null
  /** The create's event, built at the time its batch holds the write lock (see CreateExtras). */
  event: ((at: number) => OutboxRow) | undefined
  /** Stored with the plant; an unexpired record under the same (tokenId, key) makes it 'key-taken'. */
  idempotency:
    | { tokenId: string; key: string; fingerprint: string; status: number; body: string; expiresAt: number }
    | undefined
  /** The span of the store call waiting for this write, when traced (see startGroupCommit). */
  span?: Span | undefined
}

/**
 * An update or a delete, decided on the row as the batch's transaction holds it: the precondition
 * (If-Match) is asked of that row, so no other write slips between the check and the change.
 */
export interface ChangeRow {
  kind: 'update' | 'delete'
  id: bigint
  /** What an update sets; a delete has none. */
  change: PlantChange | undefined
  options: WriteOptions
  /** The span of the store call waiting for this write, when traced (see startGroupCommit). */
  span?: Span | undefined
}

/** A create's outcome, or a change's (for a delete, the plant and version it had). */
export type RowOutcome = CreateOutcome | WriteResult

/** What a committed batch did: each row's outcome, and whether it queued any webhook delivery. */
export interface BatchResult {
  outcomes: RowOutcome[]
  queued: boolean
}

/** Writes every row in one transaction; throws (having rolled back) when the transaction fails. */
export type WriteBatch = (batch: BatchRow[], now: number) => BatchResult

/** Prepares the statements once; the returned function writes one batch and returns what it did. */
export function prepareBatchWriter(db: Database): WriteBatch {
  const insert = db.prepare(INSERT_PLANT)
  const outbox = prepareOutbox(db)
  // An expired record under the same key is overwritten; an unexpired one leaves changes at 0.
  const insertKey = db.prepare(
    `INSERT INTO idempotency_keys (token_id, key, fingerprint, status, body, expires_at)
     VALUES (@tokenId, @key, @fingerprint, @status, @body, @expiresAt)
     ON CONFLICT (token_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
       status = excluded.status, body = excluded.body, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= @now`,
  )
  const selectVersioned = db
    .prepare('SELECT id, name, tag, version FROM plants WHERE id = ?')
    .safeIntegers(true)
  const update = db.prepare(
    `UPDATE plants SET name = @name, name_folded = @nameFolded, tag = @tag, version = version + 1,
       updated_at = @now WHERE id = @id`,
  )
  const remove = db.prepare('DELETE FROM plants WHERE id = ?')
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT create_one')
  const releaseSavepoint = db.prepare('RELEASE create_one')
  const rollbackSavepoint = db.prepare('ROLLBACK TO create_one')

  /** The batch's outbox events, first and last seq; reset by each batch. */
  let firstSeq = 0
  let lastSeq = 0

  function writeEvent(event: OutboxRow, now: number): void {
    lastSeq = outbox.write(event, now)
    if (firstSeq === 0) firstSeq = lastSeq
  }

  /** One create inside the batch's transaction; a refusal undoes only its own writes. */
  function insertOne(row: CreateRow, now: number, eventsAt: number): CreateOutcome {
    const record = row.idempotency
    if (record) savepoint.run()
    try {
      insert.run(...plantRowValues(row, now))
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
    if (row.event) writeEvent(row.event(eventsAt), now)
    return 'created'
  }

  /**
   * One update or delete inside the batch's transaction. A change that changes nothing keeps the
   * version (and so the ETag) and writes no event.
   */
  function changeOne(row: ChangeRow, now: number, eventsAt: number): WriteResult {
    const stored = selectVersioned.get(row.id) as VersionedRow | undefined
    if (!stored) return { outcome: 'missing' }
    const version = Number(stored.version)
    const current = toPlant(stored)
    const { precondition, event } = row.options
    if (precondition && !precondition(current, version)) return { outcome: 'precondition-failed' }
    if (row.kind === 'delete') {
      remove.run(row.id)
      if (event) writeEvent(outboxRow(event(current, new Date(eventsAt))), now)
      // The plant as it was, with the version it had: a deleted plant has no next version.
      return { outcome: 'done', plant: current, version }
    }
    const next = changedPlant(current, row.change ?? {})
    if (next === undefined) return { outcome: 'done', plant: current, version }
    update.run({ id: row.id, name: next.name, nameFolded: foldName(next.name), tag: next.tag ?? null, now })
    if (event) writeEvent(outboxRow(event(next, new Date(eventsAt))), now)
    return { outcome: 'done', plant: next, version: version + 1 }
  }

  return function writeBatch(batch, now) {
    const outcomes: RowOutcome[] = []
    let queued = false
    firstSeq = 0
    lastSeq = 0
    begin.run()
    // Read once the write lock is held, so no earlier commit (one that freed an id, say) is dated
    // later; every event of the batch has this time, so none is dated before a row ahead of it.
    const eventsAt = Date.now()
    try {
      for (const row of batch) {
        outcomes.push(row.kind === 'create' ? insertOne(row, now, eventsAt) : changeOne(row, now, eventsAt))
      }
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
