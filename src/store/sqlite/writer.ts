import { closeSync, fdatasync, openSync, statSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import Database, { type Statement } from 'better-sqlite3'
import { StoreUnavailableError } from '../errors.js'
import { type BatchResult, type BatchRow, prepareBatchWriter, type WriteBatch } from './batch.js'
import { retryWhileBusy } from './busy.js'
import { logFiles } from './opened-file.js'
import { PAGE_CACHE_PRAGMA } from './page-cache.js'
import { WalIndex } from './wal-index.js'

/** Where a batch of creates goes to be committed. */
export interface BatchSink {
  /**
   * Commits the batch and resolves with each row's outcome once the batch is durable. The next batch
   * may be given at once: a sink takes batches in order.
   */
  write(batch: BatchRow[], now: number): Promise<BatchResult>
  /**
   * Copies the write-ahead log into the database and rewinds it, between two batches; once writes
   * have paused, it also truncates the file.
   */
  checkpoint(): Promise<void>
  /**
   * SQLite's `data_version` on the sink's own connection: it moves whenever any other connection
   * (this process's main one, the CLI, another worker) commits, and never for the sink's own creates.
   * Undefined while the sink has no connection of its own.
   */
  othersCommitted(): number | undefined
  /**
   * Settles once every batch committed so far is durable, or undefined when each already is. A batch
   * is visible to other connections from its commit, before its fsync: a read must not answer with
   * what a failed fsync or a power cut could still take back. Rejects, then and from then on, with
   * what stopped the sink (a failed fsync): what it left in the log may never reach the disk.
   */
  durable(): Promise<void> | undefined
  /**
   * Fsyncs the log now, whatever this sink has written: what any connection or process committed to
   * it before the call is durable once it resolves. For a reader that acts outside the database on
   * what it read (the webhook dispatcher), where durable() cannot see other connections' commits, and
   * for writes another connection committed without an fsync of their own (webhook subscriptions). A
   * failure stops the sink as a batch's does.
   */
  syncLog(): Promise<void>
  /** Throws what stopped the sink for good (a failed fsync), if anything did: readiness asks. */
  check(): void
  close(): Promise<void>
}

/** Commits on the caller's connection, blocking its thread: for `:memory:`, which has no second connection. */
export function inlineSink(db: Database.Database): BatchSink {
  const writeBatch = prepareBatchWriter(db)
  return {
    write: async (batch, now) => writeBatch(batch, now),
    // `:memory:` has no log file.
    checkpoint: async () => {},
    othersCommitted: () => undefined,
    // `:memory:` is as durable as it gets once committed.
    durable: () => undefined,
    syncLog: async () => {},
    check: () => {},
    close: async () => {},
  }
}

type CheckpointMode = 'PASSIVE' | 'RESTART' | 'TRUNCATE'

/** Each mode does what the ones before it do, and more. */
const STRENGTH: Record<CheckpointMode, number> = { PASSIVE: 0, RESTART: 1, TRUNCATE: 2 }

/**
 * Runs checkpoints in a worker thread with its own connection (see checkpoint-thread.js), one at a
 * time; a request made while one of the same or a stronger mode runs shares it, and one for a
 * stronger mode runs after it. The thread starts on the first request and keeps the process alive
 * only while one is under way.
 */
class Checkpointer {
  private worker: Worker | undefined
  private running: { mode: CheckpointMode; done: Promise<void> } | undefined

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    /** Throws unless the file at the path is still the one the store opened. */
    private readonly check: () => void,
    private readonly script: URL = new URL('./checkpoint-thread.js', import.meta.url),
  ) {}

  /**
   * PASSIVE copies what it can without the write lock; RESTART also waits for it, so that the next
   * commit rewinds the log to its start; TRUNCATE also empties the file.
   */
  run(mode: CheckpointMode): Promise<void> {
    const current = this.running
    if (current && STRENGTH[current.mode] >= STRENGTH[mode]) return current.done
    // An automatic PASSIVE under way when a TRUNCATE is asked for would otherwise stand in for it.
    const started = current ? current.done.catch(() => {}).then(() => this.send(mode)) : this.send(mode)
    const done = started.finally(() => {
      if (this.running?.done === done) this.running = undefined
    })
    this.running = { mode, done }
    return done
  }

  busy(): boolean {
    return this.running !== undefined
  }

  async close(): Promise<void> {
    await this.running?.done.catch(() => {})
    const worker = this.worker
    if (!worker) return
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.ref()
    worker.postMessage('close')
    await exited
  }

  /** Asks the thread for one checkpoint; its answer, or its end, settles the promise. */
  private send(mode: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // What start throws rejects this checkpoint.
      this.worker ??= this.start()
      const worker = this.worker
      const done = (error?: Error) => {
        worker.off('message', answered)
        worker.off('exit', stopped)
        worker.unref()
        if (error) reject(error)
        else resolve()
      }
      const answered = (reply: { error?: string }) => done(reply.error ? new Error(reply.error) : undefined)
      const stopped = () => done(new Error('the SQLite checkpoint thread has stopped'))
      worker.on('message', answered)
      worker.on('exit', stopped)
      // Referenced only while a checkpoint runs, so that an idle thread never keeps the process up.
      worker.ref()
      worker.postMessage({ mode })
    })
  }

  private start(): Worker {
    // The thread opens the path anew, and SQLite would take whatever file is there now: one put in
    // place of the store's would get the store's log and wal-index checkpointed into it.
    this.check()
    const worker = new Worker(this.script, {
      workerData: { path: this.path, busyTimeoutMs: this.busyTimeoutMs, pageCachePragma: PAGE_CACHE_PRAGMA },
      // It holds nothing but its connection; a small heap keeps the service's memory near one process's.
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    })
    worker.unref()
    // An uncaught error ends the thread ('exit' follows); the next checkpoint starts a new one.
    worker.on('error', () => {})
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined
    })
    return worker
  }
}

interface Queued {
  batch: BatchRow[]
  now: number
  resolve: (result: BatchResult) => void
  reject: (error: Error) => void
}

/** A read waiting until the batches committed before it (up to `seq`) are durable. */
interface DurableWaiter {
  seq: number
  resolve: () => void
  reject: (error: Error) => void
}

/** What waits for the next fsync: a committed batch's answer, or a caller of syncLog. */
interface Committed {
  resolve: () => void
  reject: (error: Error) => void
}

/**
 * An automatic checkpoint runs once the log holds this many frames not yet copied back (~20 MB, about
 * 2,000 creates: random ids dirty one leaf of the plants table and one of its tag index per create,
 * and the outbox adds about half a page). Checkpointing less often copies each page fewer times; more
 * often keeps each checkpoint's write-back, which delays the log's own fsyncs while the disk drains
 * it, shorter. The frames are counted in the log itself (WalIndex), so every process that writes to
 * the database (each worker of `--workers N`) sees the same count: counting its own creates instead,
 * each worker would checkpoint N times less often and the log would grow N times as long.
 */
const CHECKPOINT_FRAMES = 5000

/**
 * The automatic checkpoint is a RESTART once the log is eight intervals long (~160 MB); before that,
 * PASSIVE. A RESTART holds the write lock while it copies what was committed during the passes before
 * it and fsyncs the database, and the creates of those milliseconds wait for it (2–8 ms under a
 * create load, see checkpoint-passes.js); a PASSIVE one never blocks a commit, but the log only
 * rewinds after a checkpoint that copied all of it, which under a constant load only a RESTART
 * achieves (a PASSIVE pass takes 5–15 ms and a commit always lands meanwhile). A RESTART every fourth
 * interval gave the same create p99 (16–25 ms over three 10 s rounds) with a log half as long; every
 * eighth takes the write lock half as often. The earlier measurements are in
 * docs/performance-history.md.
 */
const RESTART_FRAMES = 8 * CHECKPOINT_FRAMES

/**
 * Every connection but the checkpoint thread's checkpoints the log in its own commits only past twice
 * the RESTART length, a bound for when nothing else checkpoints (--wal-checkpoint-interval off, no
 * store of the process watching the log). At SQLite's default of 1000 frames, which a create load
 * keeps the log past between the checkpoint thread's runs, nearly every commit of those connections
 * ran a checkpoint inside it: copying the log back and fsyncing it and the database. On the webhook
 * dispatcher's connection that was most of its thread's time (one subscriber got about 2,400
 * deliveries/s against 7,000 creates/s, 3,100–3,450 without; README, Webhooks, "Measured"); on the
 * store's main connection it was the event loop's (an update during a create load: p90 about 10 ms
 * against 5; README, Performance). The sink's log watch (LOG_WATCH_MS) asks the checkpoint thread
 * instead. Without a checkpoint the dispatcher's commits do no fsync at all (see
 * SqliteWebhookStore.relaxed): an outcome lost to a power cut is an attempt made again, and the
 * checkpoint thread fsyncs the log before copying it.
 */
export const BACKSTOP_CHECKPOINT_FRAMES = 2 * RESTART_FRAMES

/**
 * How often a watching sink looks at the log's length (one 100-byte read of the wal-index) for what
 * other connections committed: the store's main one (tokens, webhooks, retention), the
 * dispatcher's, another process's (an import). Its own commits look at once. Five reads a second
 * cost nothing measurable, and a checkpoint those commits made due is asked for within 200 ms.
 */
const LOG_WATCH_MS = 200

/**
 * How long after the log was last written (by any connection of any process: its file's mtime) the
 * periodic checkpoint still counts as under a write load, and so rewinds the log (RESTART) instead of
 * truncating it. Truncating a log that creates grow again at once stalls them: the file's blocks are
 * freed, and the commits that follow extend it again (a 20 s create load with the periodic checkpoint
 * every 4 s had a p99 of 140 ms and a maximum of 199 ms truncating, 21 and 39 ms rewinding). Under a
 * load the automatic RESTARTs keep the file's size bounded anyway, and once writes pause the next
 * periodic checkpoint truncates it.
 */
const QUIET_MS = 1000

/** When the write-ahead log file was last written (epoch ms); 0 when it does not exist. */
function logWrittenAt(logPath: string): number {
  try {
    return statSync(logPath).mtimeMs
  } catch {
    return 0
  }
}

/**
 * Commits on a second connection in the event loop's own thread and makes each commit durable with
 * an fsync of the log on libuv's thread pool, answering a batch only once that fsync is done. The
 * connection commits with synchronous=NORMAL (the commit writes the log but does not fsync it), so the
 * event loop spends only SQLite's own work on a batch (about a millisecond for 25 creates) and never
 * waits for the disk: while one fsync runs, the next batches are written, and one fsync covers every
 * batch committed before it started. Checkpoints, which copy thousands of pages and fsync the
 * database, run in a thread (Checkpointer) every CHECKPOINT_FRAMES of log instead of inside a commit.
 * A write lock held by another connection or process is waited for between turns of the event loop
 * (retryWhileBusy), never by blocking it; batches given meanwhile join the next attempt's transaction.
 */
export function fileSink(
  path: string,
  busyTimeoutMs: number,
  options: {
    /** The file fsynced to make a commit durable; only tests change it (from `${path}-wal`). */
    syncPath?: string
    /** See CHECKPOINT_FRAMES; only tests change it. */
    checkpointFrames?: number
    /** See RESTART_FRAMES; only tests change it. */
    restartFrames?: number
    /** The checkpoint thread's script; only tests change it. */
    checkpointThread?: URL
    /** See QUIET_MS; only tests change it. */
    quietMs?: number
    /**
     * Also look at the log every this many ms (LOG_WATCH_MS by default; 0: only after the sink's own
     * commits), and ask for the automatic checkpoint when others' commits made it due. Off for a store
     * whose process has another store doing it (the webhook dispatcher's thread).
     */
    watchMs?: number
    /**
     * Throws when the path no longer leads to the file the store opened (OpenedFile.check). Run
     * before each transaction, and before the checkpoint thread opens the path; what it throws fails
     * the batches that would have joined the transaction, or the checkpoint.
     */
    checkFile?: () => void
  } = {},
): BatchSink {
  /**
   * The sink's connection, opened by the first batch: a store that never takes a create (a CLI
   * command, the webhook dispatcher's thread) never opens it.
   */
  let connection: { db: Database.Database; writeBatch: WriteBatch; dataVersion: Statement } | undefined
  const connect = () => {
    const db = new Database(path)
    try {
      db.pragma('busy_timeout = 0')
      db.pragma('synchronous = NORMAL')
      db.pragma('foreign_keys = ON')
      db.pragma(PAGE_CACHE_PRAGMA)
      // Checkpoints run in the checkpoint thread, never inside a commit on the event loop.
      db.pragma('wal_autocheckpoint = 0')
      return {
        db,
        writeBatch: prepareBatchWriter(db),
        dataVersion: db.prepare('PRAGMA data_version').pluck(),
      }
    } catch (error) {
      // Reading the schema can meet a lock (another process in exclusive locking mode): the retry
      // opens a new connection, so this one must not stay open.
      db.close()
      throw error
    }
  }
  const checkpointer = new Checkpointer(
    path,
    busyTimeoutMs,
    () => options.checkFile?.(),
    options.checkpointThread,
  )
  const checkpointFrames = options.checkpointFrames ?? CHECKPOINT_FRAMES
  const restartFrames = options.restartFrames ?? RESTART_FRAMES
  const quietMs = options.quietMs ?? QUIET_MS
  // Beside a symbolic link an fsync would find no log, or a stale one and leave the acknowledged
  // creates unsynced.
  const { log: logPath, index } = logFiles(path)
  const walIndex = new WalIndex(index)
  /** The log's length when this sink last asked for an automatic checkpoint. */
  let checkpointedAt = 0
  const syncPath = options.syncPath ?? logPath
  const watchMs = options.watchMs ?? LOG_WATCH_MS

  const queue: Queued[] = []
  /** The queue is being written: a batch given meanwhile joins the next transaction. */
  let committing = false
  const awaitingSync: Committed[] = []
  let syncing = false
  /** Batches committed, and of those, how many are known durable (fsynced). */
  let committedSeq = 0
  let durableSeq = 0
  /** Reads waiting until the batches committed before them (up to `seq`) are durable. */
  const durableWaiters: DurableWaiter[] = []
  /** Set for good once an fsync fails: after that, nothing in the page cache can be trusted. */
  let failure: StoreUnavailableError | undefined
  /** The log, opened after the first commit; an fsync flushes the file, whichever descriptor asks. */
  let walFd: number | undefined
  const idle: Array<() => void> = []

  const settled = () => {
    if (queue.length > 0 || committing || syncing || awaitingSync.length > 0) return
    for (const resolve of idle.splice(0)) resolve()
  }

  /** Writes everything queued in one transaction, waiting out another connection's write lock. */
  const commitQueued = async () => {
    committing = true
    while (queue.length > 0) {
      let taken: Queued[] = []
      let written: BatchResult
      try {
        // A failed fsync refuses what waited meanwhile; a busy lock throws before anything is taken.
        written = await retryWhileBusy(() => {
          if (failure) throw failure
          options.checkFile?.()
          const first = queue[0] as Queued
          connection ??= connect()
          const result = connection.writeBatch(
            queue.length === 1 ? first.batch : queue.flatMap((q) => q.batch),
            first.now,
          )
          taken = queue.splice(0)
          committedSeq++
          return result
        }, busyTimeoutMs)
      } catch (error) {
        for (const q of queue.splice(0)) q.reject(error as Error)
        // The next batch opens a new connection. SQLite opens a file this process may not write
        // read-only without saying so, and such a connection stays read-only after the file is made
        // writable again: every later write failed until a restart.
        connection?.db.close()
        connection = undefined
        break
      }
      let at = 0
      for (const q of taken) {
        const outcomes = written.outcomes.slice(at, at + q.batch.length)
        at += q.batch.length
        const result = { outcomes, queued: written.queued, lastSeq: written.lastSeq }
        awaitingSync.push({ resolve: () => q.resolve(result), reject: q.reject })
      }
      if (!checkpointer.busy()) checkpointIfDue()
      if (!syncing) startSync()
    }
    committing = false
    settled()
  }

  /**
   * Asks for an automatic checkpoint once the log holds CHECKPOINT_FRAMES not yet copied back, and
   * at most once per CHECKPOINT_FRAMES it grows: while another process's checkpoint runs the backlog
   * stays, and asking again at every commit would only meet its lock.
   */
  const checkpointIfDue = () => {
    const log = walIndex.read()
    if (log === undefined) return
    // The log restarted since: its frames count from zero again.
    if (log.frames < checkpointedAt) checkpointedAt = 0
    const backlog = log.frames - log.backfilled
    const grown = log.frames - checkpointedAt
    if (backlog < checkpointFrames || grown < checkpointFrames) return
    checkpointedAt = log.frames
    // A checkpoint that fails leaves the log longer; the next one tries again.
    checkpointer.run(log.frames >= restartFrames ? 'RESTART' : 'PASSIVE').catch(() => {})
  }

  const watch =
    watchMs > 0
      ? setInterval(() => {
          if (!failure && !checkpointer.busy()) checkpointIfDue()
        }, watchMs).unref()
      : undefined

  const startSync = () => {
    syncing = true
    // Every batch committed so far is in the group: each is queued for its fsync in the same
    // microtask run as its commit, so none is between the two when an fsync starts.
    const upTo = committedSeq
    const group = awaitingSync.splice(0)
    try {
      walFd ??= openSync(syncPath, 'r+')
    } catch (error) {
      synced(group, error as NodeJS.ErrnoException, upTo)
      return
    }
    fdatasync(walFd, (error) => synced(group, error, upTo))
  }

  /**
   * A failed fsync stops the sink for good: the kernel may have dropped the pages it could not write,
   * so nothing committed since the last good fsync can be trusted to reach the disk.
   */
  const fail = (error: NodeJS.ErrnoException): StoreUnavailableError => {
    failure ??= Object.assign(
      new StoreUnavailableError(`the write-ahead log could not be made durable: ${error.message}`),
      { code: error.code },
    )
    for (const entry of awaitingSync.splice(0)) entry.reject(failure)
    for (const waiter of durableWaiters.splice(0)) waiter.reject(failure)
    return failure
  }

  const synced = (group: Committed[], error: NodeJS.ErrnoException | null, upTo: number) => {
    syncing = false
    if (error) {
      const stopped = fail(error)
      for (const entry of group) entry.reject(stopped)
    } else {
      for (const entry of group) entry.resolve()
      // An fsync makes durable everything written to the log before it started: the whole group.
      durableSeq = upTo
      let ready = 0
      while (ready < durableWaiters.length && (durableWaiters[ready] as DurableWaiter).seq <= durableSeq)
        ready++
      for (const waiter of durableWaiters.splice(0, ready)) waiter.resolve()
    }
    if (awaitingSync.length > 0) startSync()
    else settled()
  }

  return {
    write(batch, now) {
      if (failure) return Promise.reject(failure)
      return new Promise((resolve, reject) => {
        queue.push({ batch, now, resolve, reject })
        if (!committing) void commitQueued()
      })
    },
    async checkpoint() {
      if (failure) throw failure
      await checkpointer.run(Date.now() - logWrittenAt(logPath) < quietMs ? 'RESTART' : 'TRUNCATE')
    },
    durable() {
      if (failure) return Promise.reject(failure)
      if (durableSeq === committedSeq) return undefined
      const seq = committedSeq
      return new Promise((resolve, reject) => durableWaiters.push({ seq, resolve, reject }))
    },
    syncLog() {
      if (failure) return Promise.reject(failure)
      // Joins the batches' fsyncs: the next one to start covers this call's commits. An fsync under
      // way may have started before them, so the call waits for the one after it, which runs once
      // for every call made meanwhile. An fsync of each call's own would run beside the batches' on
      // the same file, and the batches' would wait behind it.
      return new Promise<void>((resolve, reject) => {
        awaitingSync.push({ resolve, reject })
        if (!syncing) startSync()
      })
    },
    othersCommitted() {
      return connection?.db.open ? (connection.dataVersion.get() as number) : undefined
    },
    check() {
      if (failure) throw failure
    },
    async close() {
      clearInterval(watch)
      while (queue.length > 0 || committing || syncing || awaitingSync.length > 0) {
        await new Promise<void>((resolve) => idle.push(resolve))
      }
      await checkpointer.close()
      connection?.db.close()
      walIndex.close()
      if (walFd !== undefined) closeSync(walFd)
    },
  }
}
