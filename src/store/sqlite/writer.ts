import { Worker } from 'node:worker_threads'
import type { Database } from 'better-sqlite3'
import type { CreateOutcome } from '../types.js'
import { type BatchRow, prepareBatchWriter } from './batch.js'

/** Where a batch of creates goes to be committed. */
export interface BatchSink {
  write(batch: BatchRow[], now: number): Promise<CreateOutcome[]>
  close(): Promise<void>
}

/** Commits on the caller's connection, blocking its thread: for `:memory:`, which has no second connection. */
export function inlineSink(db: Database): BatchSink {
  const writeBatch = prepareBatchWriter(db)
  return {
    write: async (batch, now) => writeBatch(batch, now),
    close: async () => {},
  }
}

interface WriterReply {
  outcomes?: CreateOutcome[]
  error?: { message: string; code?: string }
}

/**
 * Commits in a worker thread with its own connection, so the fsync never stalls the event loop. The
 * thread starts on the first write unless `eager` (commands that never create a plant never pay
 * for it) and keeps
 * the process alive only while a batch is in flight. One batch is in flight at a time.
 */
export function threadSink(
  path: string,
  busyTimeoutMs: number,
  options: { eager?: boolean } = {},
): BatchSink {
  let worker: Worker | undefined
  let failure: Error | undefined
  let inFlight: { resolve: (o: CreateOutcome[]) => void; reject: (e: Error) => void } | undefined

  const fail = (error: Error) => {
    failure = error
    inFlight?.reject(error)
    inFlight = undefined
  }

  const start = (): Worker => {
    const thread = new Worker(new URL('./writer-thread.js', import.meta.url), {
      workerData: { path, busyTimeoutMs },
      // It holds one batch at a time; a small heap keeps the service's memory near one process's.
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    })
    thread.unref()
    thread.on('message', (reply: WriterReply) => {
      const pending = inFlight
      inFlight = undefined
      thread.unref()
      if (reply.outcomes) pending?.resolve(reply.outcomes)
      else pending?.reject(Object.assign(new Error(reply.error?.message), { code: reply.error?.code }))
    })
    thread.on('error', (error) => fail(error))
    thread.on('exit', () => fail(new Error('the SQLite writer thread has stopped')))
    return thread
  }

  // A server starts it at once, so that its first creates do not wait for the thread to boot.
  if (options.eager) worker = start()

  return {
    write(batch, now) {
      if (failure) return Promise.reject(failure)
      worker ??= start()
      const target = worker
      return new Promise((resolve, reject) => {
        inFlight = { resolve, reject }
        // Referenced only while a batch is in flight, so that a waiting create keeps the process up.
        target.ref()
        target.postMessage({ batch, now })
      })
    },
    async close() {
      if (!worker) return
      const exited = new Promise((resolve) => worker?.once('exit', resolve))
      // Held referenced until it is gone: otherwise the process could end while the last commit
      // and the close are still under way.
      worker.ref()
      worker.postMessage('close')
      await exited
    },
  }
}
