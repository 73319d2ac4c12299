// One group-commit batch written in one transaction.
import type { Span } from '@opentelemetry/api'
import type { Database } from 'better-sqlite3'
import { foldName } from '../../plants/fold.js'
import { changedPlant, type Plant } from '../../plants/model.js'
import type {
  BatchCreateOutcome,
  BatchRemoveOutcome,
  CreateOutcome,
  PlantChange,
  WriteOptions,
  WriteResult,
} from '../types.js'
import { type OutboxRow, outboxRow, prepareOutbox } from './fan-out.js'
import { INSERT_PLANT, plantRowValues, toPlant, type VersionedRow } from './plant-row.js'

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** A write as the batch writer receives it: a create, a change of one stored plant, or a batch of either. */
export type BatchRow = CreateRow | ChangeRow | CreateManyRow | RemoveManyRow

/** An Idempotency-Key record as a create stores it, its expiry in epoch milliseconds. */
export interface KeyRecord {
  tokenId: string
  key: string
  fingerprint: string
  status: number
  body: string
  expiresAt: number
}

/** A create as the batch writer receives it. */
export interface CreateRow {
  kind: 'create'
  id: bigint
  name: string
  tag: string | null
  /** The create's event, built at the time its batch holds the write lock (see CreateExtras). */
  event: ((at: number) => OutboxRow) | undefined
  /** Stored with the plant; an unexpired record under the same (tokenId, key) makes it 'key-taken'. */
  idempotency: KeyRecord | undefined
  /** The span of the store call waiting for this write, when traced (see startGroupCommit). */
  span?: Span | undefined
}

/** A plant of a batch create: its row, and its event built at the time the transaction writes it. */
export interface ManyItem {
  id: bigint
  name: string
  tag: string | null
  event: ((at: number) => OutboxRow) | undefined
}

/** A batch create: every plant inserted, with its event, or none. */
export interface CreateManyRow {
  kind: 'create-many'
  items: ManyItem[]
  /** Stored with the plants; an unexpired record under the same (tokenId, key) makes it 'key-taken'. */
  idempotency: KeyRecord | undefined
  span?: Span | undefined
}

/** A batch delete: every plant named deleted, with its event, or none. */
export interface RemoveManyRow {
  kind: 'delete-many'
  ids: readonly bigint[]
  allowMissing: boolean
  /** The event of each deletion, from the plant as it was. */
  event: ((plant: Plant, at: number) => OutboxRow) | undefined
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

/** A create's outcome, or a change's (for a delete, the plant and version it had), or a batch's. */
export type RowOutcome = CreateOutcome | WriteResult | BatchCreateOutcome | 'key-taken' | BatchRemoveOutcome

/**
 * What a committed batch did: each row's outcome, whether it queued any webhook delivery, and
 * whether it wrote any plant change (every event this writer stores is one).
 */
export interface BatchResult {
  outcomes: RowOutcome[]
  queued: boolean
  changed: boolean
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

  /** The one statement that inserts a plant, for a create and a batch create alike. */
  function insertPlant(row: { id: bigint; name: string; tag: string | null }, now: number): void {
    insert.run(...plantRowValues(row, now))
  }

  /** One create inside the batch's transaction; a refusal undoes only its own writes. */
  function insertOne(row: CreateRow, now: number, eventsAt: number): CreateOutcome {
    const record = row.idempotency
    if (record) savepoint.run()
    try {
      insertPlant(row, now)
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
    if (event) writeEvent(outboxRow(event(next, new Date(eventsAt), current)), now)
    return { outcome: 'done', plant: next, version: version + 1 }
  }

  /**
   * A batch create inside the group's transaction: every id is looked up first (one repeated within
   * the batch counts as taken at its second place), so a refusal writes nothing and no other write of
   * the group is undone.
   */
  function insertMany(row: CreateManyRow, now: number, eventsAt: number): BatchCreateOutcome | 'key-taken' {
    const seen = new Set<bigint>()
    for (const [index, item] of row.items.entries()) {
      if (seen.has(item.id) || selectVersioned.get(item.id) !== undefined) return { outcome: 'exists', index }
      seen.add(item.id)
    }
    if (row.idempotency && insertKey.run({ ...row.idempotency, now }).changes === 0) return 'key-taken'
    for (const item of row.items) insertPlant(item, now)
    for (const item of row.items) if (item.event) writeEvent(item.event(eventsAt), now)
    return { outcome: 'created' }
  }

  /** A batch delete inside the group's transaction: looked up first, so a refusal writes nothing. */
  function removeMany(row: RemoveManyRow, now: number, eventsAt: number): BatchRemoveOutcome {
    const found: Plant[] = []
    const seen = new Set<bigint>()
    for (const id of row.ids) {
      const stored = seen.has(id) ? undefined : (selectVersioned.get(id) as VersionedRow | undefined)
      seen.add(id)
      if (stored) found.push(toPlant(stored))
      else if (!row.allowMissing) return { outcome: 'missing', id }
    }
    for (const plant of found) {
      remove.run(plant.id)
      if (row.event) writeEvent(row.event(plant, eventsAt), now)
    }
    return { outcome: 'deleted', ids: found.map((plant) => plant.id) }
  }

  function writeOne(row: BatchRow, now: number, eventsAt: number): RowOutcome {
    switch (row.kind) {
      case 'create':
        return insertOne(row, now, eventsAt)
      case 'create-many':
        return insertMany(row, now, eventsAt)
      case 'delete-many':
        return removeMany(row, now, eventsAt)
      default:
        return changeOne(row, now, eventsAt)
    }
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
        outcomes.push(writeOne(row, now, eventsAt))
      }
      // Seqs only grow, and no other connection writes within this transaction: the batch's events
      // are exactly those in [firstSeq, lastSeq].
      if (firstSeq !== 0) queued = outbox.fanOut(firstSeq, lastSeq) > 0
      commit.run()
    } catch (error) {
      if (db.inTransaction) rollback.run()
      throw error
    }
    return { outcomes, queued, changed: firstSeq !== 0 }
  }
}
