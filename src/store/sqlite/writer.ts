import { closeSync, fdatasync, openSync } from 'node:fs'
import type { Span } from '@opentelemetry/api'
import type { Database } from 'better-sqlite3'
import { endSpan } from '../../tracing/active.js'
import { startGroupCommit } from '../../tracing/group-commit.js'
import { StoreUnavailableError } from '../errors.js'
import { type BatchResult, type BatchRow, prepareBatchWriter, type WriteBatch } from './batch.js'
import { retryWhileBusy } from './busy.js'

/** Where each turn's batch of writes goes to be committed. */
export interface BatchSink {
  /**
   * Commits the batch in one transaction and resolves with each row's outcome once it is durable. A
   * batch given while an earlier one waits for the write lock joins its transaction.
   */
  write(batch: BatchRow[], now: number): Promise<BatchResult>
  /**
   * Settles once every batch committed so far is durable, or undefined when each already is: a read
   * that could see a batch must not resolve before it is on disk. Rejects once the sink has stopped.
   */
  durable(): Promise<void> | undefined
  /** Throws what stopped the sink for good (a failed fsync), if anything did: readiness asks. */
  check(): void
  /** Resolves once every batch given has settled, and closes the sink's connection. */
  close(): Promise<void>
}

/** The connection batches commit on, and how to let it go. */
export interface Connection {
  db: Database
  close(): void
}

export interface SinkOptions {
  /** Opens the connection at the first batch, and again at the next one after a failed attempt. */
  connect: () => Connection
  busyTimeoutMs: number
  /** Throws when the database is no longer the file that was opened; asked before each transaction. */
  checkFile: () => void
  /** The log to fsync after each commit; none when the connection's COMMIT is durable itself. */
  logPath?: string
}

interface Queued {
  batch: BatchRow[]
  now: number
  resolve: (result: BatchResult) => void
  reject: (error: Error) => void
}

/** What waits until an fsync that started after commit number `upTo` is done. */
interface Waiting {
  upTo: number
  resolve: () => void
  reject: (error: Error) => void
}

function spanWaiting(span: Span, upTo: number): Waiting {
  return { upTo, resolve: () => endSpan(span), reject: (error) => endSpan(span, error) }
}

/**
 * Group commit: every batch given while the last one is being committed joins one transaction.
 *
 * With a log to fsync, the connection commits with synchronous=NORMAL (COMMIT writes the log without
 * fsyncing it) and an fdatasync of the log runs on libuv's pool, so that the event loop goes on taking
 * requests while the disk works; one fsync covers every batch committed before it started, and each
 * batch resolves once such an fsync is done. A failed fsync stops the sink for good: the kernel may
 * have dropped the pages it could not write, so nothing committed since the last good fsync can be
 * trusted to reach the disk.
 *
 * A write lock held by another connection or process is waited for between turns of the event loop
 * (retryWhileBusy, on a connection without a busy timeout), never by blocking it.
 */
export function batchSink(options: SinkOptions): BatchSink {
  const { busyTimeoutMs, checkFile, logPath } = options
  let connection: { db: Database; close(): void; writeBatch: WriteBatch } | undefined
  const queue: Queued[] = []
  let committing = false
  const waiting: Waiting[] = []
  let syncing = false
  let committed = 0
  let durableThrough = 0
  let failure: StoreUnavailableError | undefined
  let logFd: number | undefined

  const fail = (error: NodeJS.ErrnoException) => {
    failure ??= Object.assign(
      new StoreUnavailableError(`the write-ahead log could not be made durable: ${error.message}`),
      { code: error.code },
    )
    for (const w of waiting.splice(0)) w.reject(failure)
  }

  const synced = (upTo: number, error: NodeJS.ErrnoException | null) => {
    syncing = false
    if (error) return fail(error)
    durableThrough = upTo
    let ready = 0
    while (ready < waiting.length && (waiting[ready] as Waiting).upTo <= upTo) ready++
    for (const w of waiting.splice(0, ready)) w.resolve()
    if (waiting.length > 0) sync()
  }

  /** Fsyncs the log; everything committed before the call is durable once it is done. */
  const sync = () => {
    syncing = true
    const upTo = committed
    try {
      logFd ??= openSync(logPath as string, 'r+')
    } catch (error) {
      synced(upTo, error as NodeJS.ErrnoException)
      return
    }
    fdatasync(logFd, (error) => synced(upTo, error))
  }

  const attempt = () => {
    if (failure) throw failure
    checkFile()
    if (!connection) {
      const opened = options.connect()
      try {
        connection = { ...opened, writeBatch: prepareBatchWriter(opened.db) }
      } catch (error) {
        // Reading the schema can meet a lock: the retry opens a new connection.
        opened.close()
        throw error
      }
    }
    const first = queue[0] as Queued
    const rows = queue.length === 1 ? first.batch : queue.flatMap((q) => q.batch)
    const span = startGroupCommit('sqlite', rows)
    let written: BatchResult
    try {
      written = connection.writeBatch(rows, first.now)
    } catch (error) {
      endSpan(span, error)
      throw error
    }
    committed++
    return { written, taken: queue.splice(0), span }
  }

  const commitQueued = async () => {
    committing = true
    while (queue.length > 0) {
      try {
        const { written, taken, span } = await retryWhileBusy(attempt, busyTimeoutMs)
        let at = 0
        for (const q of taken) {
          const result = {
            outcomes: written.outcomes.slice(at, at + q.batch.length),
            queued: written.queued,
            changed: written.changed,
          }
          at += q.batch.length
          if (logPath === undefined) q.resolve(result)
          else waiting.push({ upTo: committed, resolve: () => q.resolve(result), reject: q.reject })
        }
        if (logPath === undefined) {
          durableThrough = committed
          endSpan(span)
        } else {
          // The commit's span lasts until the fsync that makes it durable, which its requests wait for.
          if (span) waiting.push(spanWaiting(span, committed))
          if (!syncing) sync()
        }
      } catch (error) {
        for (const q of queue.splice(0)) q.reject(error as Error)
        // The next batch opens a new connection: SQLite opens a file this process may not write
        // read-only without saying so, and such a connection stays read-only once the file is
        // writable again.
        connection?.close()
        connection = undefined
      }
    }
    committing = false
  }

  return {
    write(batch, now) {
      if (failure) return Promise.reject(failure)
      return new Promise((resolve, reject) => {
        queue.push({ batch, now, resolve, reject })
        if (!committing) void commitQueued()
      })
    },
    durable() {
      if (failure) return Promise.reject(failure)
      if (durableThrough === committed) return undefined
      return new Promise((resolve, reject) => waiting.push({ upTo: committed, resolve, reject }))
    },
    check() {
      if (failure) throw failure
    },
    async close() {
      while (committing || syncing) await new Promise((resolve) => setTimeout(resolve, 1))
      connection?.close()
      connection = undefined
      if (logFd !== undefined) closeSync(logFd)
      logFd = undefined
    },
  }
}
