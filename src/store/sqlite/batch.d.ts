import type { Database } from 'better-sqlite3'
import type { CreateOutcome } from '../types.js'

/** A create as the writer receives it: plain values only, so it crosses to the writer thread as is. */
export interface BatchRow {
  id: bigint
  name: string
  tag: string | null
  event: { id: string; type: string; payload: string; createdAt: number } | undefined
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

export function prepareBatchWriter(db: Database): WriteBatch
