import type { Database } from 'better-sqlite3'
import { StoreUnavailableError } from '../errors.js'
import { type BatchResult, type BatchRow, prepareBatchWriter } from './batch.js'
import { retryWhileBusy } from './busy.js'

/** Where each turn's batch of writes goes to be committed. */
export interface BatchSink {
  /**
   * Commits the batch in one transaction and resolves with each row's outcome once it is durable. A
   * batch given while an earlier one waits for the write lock joins its transaction.
   */
  write(batch: BatchRow[], now: number): Promise<BatchResult>
  /** Throws what stopped the sink for good (a failed write of the log), if anything did: readiness asks. */
  check(): void
}

interface Queued {
  batch: BatchRow[]
  now: number
  resolve: (result: BatchResult) => void
  reject: (error: Error) => void
}

/**
 * The log could not be written or fsynced: the kernel may have dropped the pages it could not write,
 * so nothing committed since the last good fsync can be trusted to reach the disk.
 */
function lostWrite(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'SQLITE_IOERR_FSYNC' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_TRUNCATE'
}

/**
 * Group commit on the store's own connection. The connection commits with synchronous=FULL, so COMMIT
 * returns only once the log is fsynced: a batch is answered when durable, and what any read sees is
 * already on disk. One fsync pays for every write of a turn. A write lock held by another connection
 * or process is waited for between turns of the event loop, never by blocking it (retryWhileBusy);
 * batches given meanwhile join the next attempt's transaction. `checkFile` runs before each
 * transaction and throws when the database is no longer the file that was opened.
 */
export function groupCommit(db: Database, busyTimeoutMs: number, checkFile: () => void): BatchSink {
  const writeBatch = prepareBatchWriter(db)
  const queue: Queued[] = []
  let waiting = false
  /** Set for good once the log could not be made durable. */
  let failure: StoreUnavailableError | undefined

  /** One attempt at everything queued, without SQLite's busy handler, which would sleep the thread. */
  const attempt = () => {
    if (failure) throw failure
    checkFile()
    const first = queue[0] as Queued
    const rows = queue.length === 1 ? first.batch : queue.flatMap((q) => q.batch)
    db.pragma('busy_timeout = 0')
    try {
      const written = writeBatch(rows, first.now)
      return { written, taken: queue.splice(0) }
    } finally {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`)
    }
  }

  const commitQueued = async () => {
    waiting = true
    while (queue.length > 0) {
      try {
        const { written, taken } = await retryWhileBusy(attempt, busyTimeoutMs)
        let at = 0
        for (const q of taken) {
          const outcomes = written.outcomes.slice(at, at + q.batch.length)
          at += q.batch.length
          q.resolve({ outcomes, queued: written.queued })
        }
      } catch (error) {
        if (lostWrite(error)) {
          failure ??= Object.assign(
            new StoreUnavailableError(
              `the write-ahead log could not be made durable: ${(error as Error).message}`,
            ),
            { code: (error as { code?: string }).code },
          )
        }
        const refusal = lostWrite(error) ? (failure as Error) : (error as Error)
        for (const q of queue.splice(0)) q.reject(refusal)
      }
    }
    waiting = false
  }

  return {
    write(batch, now) {
      if (failure) return Promise.reject(failure)
      return new Promise((resolve, reject) => {
        queue.push({ batch, now, resolve, reject })
        if (!waiting) void commitQueued()
      })
    },
    check() {
      if (failure) throw failure
    },
  }
}
