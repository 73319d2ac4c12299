import { Worker } from 'node:worker_threads'
import type { Database } from 'better-sqlite3'
import { StoreUnavailableError } from '../errors.js'
import { type BatchResult, type BatchRow, prepareBatchWriter } from './batch.js'

/** Where a batch of creates goes to be committed. */
export interface BatchSink {
  /**
   * Commits the batch and resolves with each row's outcome once the batch is durable. The next batch
   * may be given at once: a sink takes batches in order.
   */
  write(batch: BatchRow[], now: number): Promise<BatchResult>
  /** Copies the write-ahead log into the database and truncates it, between two batches. */
  checkpoint(): Promise<void>
  close(): Promise<void>
}

/** Commits on the caller's connection, blocking its thread: for `:memory:`, which has no second connection. */
export function inlineSink(db: Database): BatchSink {
  const writeBatch = prepareBatchWriter(db)
  return {
    write: async (batch, now) => writeBatch(batch, now),
    // `:memory:` has no log file.
    checkpoint: async () => {},
    close: async () => {},
  }
}

interface WriterReply {
  seq: number
  result?: BatchResult
  /** `durability`: the fsync failed; the writer takes no more batches. */
  error?: { message: string; code?: string; durability?: boolean }
}

interface Pending {
  resolve: (result: BatchResult) => void
  reject: (error: Error) => void
}

/**
 * Commits in a worker thread with its own connection (see writer-thread.js): SQLite's work and the
 * fsync never stall the event loop, and the next batch is written while the last one is synced. The
 * thread starts on the first write unless `eager` (commands that never create a plant never pay for
 * it) and keeps the process alive only while a batch is unanswered.
 */
export function threadSink(
  path: string,
  busyTimeoutMs: number,
  options: {
    eager?: boolean
    /** The file fsynced to make a commit durable; only tests change it (from `${path}-wal`). */
    syncPath?: string
  } = {},
): BatchSink {
  let worker: Worker | undefined
  let failure: Error | undefined
  let nextSeq = 0
  const pending = new Map<number, Pending>()

  const fail = (error: Error) => {
    failure = error
    for (const entry of pending.values()) entry.reject(error)
    pending.clear()
  }

  const start = (): Worker => {
    const thread = new Worker(new URL('./writer-thread.js', import.meta.url), {
      workerData: {
        path,
        busyTimeoutMs,
        syncPath: options.syncPath,
      },
      // It holds a few batches at a time; a small heap keeps the service's memory near one process's.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    })
    thread.unref()
    thread.on('message', (reply: WriterReply) => {
      const entry = pending.get(reply.seq)
      if (!entry) return
      if (reply.result) {
        pending.delete(reply.seq)
        entry.resolve(reply.result)
      } else if (reply.error) {
        pending.delete(reply.seq)
        const error = reply.error.durability
          ? new StoreUnavailableError(reply.error.message)
          : new Error(reply.error.message)
        entry.reject(Object.assign(error, { code: reply.error.code }))
      }
      if (pending.size === 0) thread.unref()
    })
    thread.on('error', (error) => fail(error))
    thread.on('exit', () => fail(new StoreUnavailableError('the SQLite writer thread has stopped')))
    return thread
  }

  // A server starts it at once, so that its first creates do not wait for the thread to boot.
  if (options.eager) worker = start()

  /** Sends one message the thread answers with outcomes (or an error), keeping the process up meanwhile. */
  const send = (message: Record<string, unknown>): Promise<BatchResult> => {
    if (failure) return Promise.reject(failure)
    worker ??= start()
    const target = worker
    const seq = nextSeq++
    return new Promise((resolve, reject) => {
      pending.set(seq, { resolve, reject })
      // Referenced only while a message is unanswered, so that a waiting create keeps the process up.
      target.ref()
      target.postMessage({ seq, ...message })
    })
  }

  return {
    write: (batch, now) => send({ batch, now }),
    async checkpoint() {
      await send({ checkpoint: true })
    },
    async close() {
      if (!worker) return
      const exited = new Promise((resolve) => worker?.once('exit', resolve))
      // Held referenced until it is gone: otherwise the process could end while the last commit,
      // its fsync and the close are still under way.
      worker.ref()
      worker.postMessage('close')
      await exited
    },
  }
}
