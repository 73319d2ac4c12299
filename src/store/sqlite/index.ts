import { closeSync, existsSync, openSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { giveNewName, syncFile, syncFolderOf } from '../../file-sync.js'
import type { Store } from '../types.js'
import { SqliteEventStore } from './events.js'
import { SqliteIdempotencyStore } from './idempotency.js'
import { SqliteLeaseStore } from './leases.js'
import { SqliteMaintenanceStore } from './maintenance.js'
import { makeFolder } from './make-folder.js'
import { closeDatabase, openDatabase, PRIVATE_MODE, type SqliteOptions } from './open-database.js'
import { type OpenedFile, openedFile } from './opened-file.js'
import { SqlitePlantStore } from './plants.js'
import { SqliteStreamTicketStore } from './stream-tickets.js'
import { SqliteTokenStore } from './tokens.js'
import { SqliteWebhookStore } from './webhooks.js'
import { type BatchSink, batchSink, type Connection } from './writer.js'

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly plants: SqlitePlantStore
  readonly tokens: SqliteTokenStore
  readonly events: SqliteEventStore
  private readonly sink: BatchSink
  /** Undefined for `:memory:`, which has no file. */
  private readonly file: OpenedFile | undefined
  readonly maintenance: SqliteMaintenanceStore
  readonly webhooks: SqliteWebhookStore
  readonly idempotency: SqliteIdempotencyStore
  readonly leases: SqliteLeaseStore
  readonly streamTickets: SqliteStreamTicketStore
  /** The checkpoint thread, started with the writer's connection. */
  private checkpointer: Worker | undefined

  constructor(
    readonly db: Database.Database,
    options: { path: string; busyTimeoutMs: number },
    readonly migrated: readonly string[] = [],
  ) {
    const file = openedFile(options.path)
    this.file = file
    const checkFile = () => file?.check()
    const { busyTimeoutMs } = options
    // `:memory:` exists only on this connection, so it commits here, durable at COMMIT.
    this.sink = file
      ? batchSink({
          connect: () => this.connectWriter(options.path),
          busyTimeoutMs,
          checkFile,
          logPath: file.logPath,
        })
      : batchSink({ connect: () => ({ db, close: () => {} }), busyTimeoutMs, checkFile })
    this.events = new SqliteEventStore(db, () => this.sink.durable())
    this.maintenance = new SqliteMaintenanceStore(db)
    this.plants = new SqlitePlantStore(
      db,
      this.sink,
      () => this.events.appended(),
      checkFile,
      () => this.events.changed(),
    )
    this.tokens = new SqliteTokenStore(db)
    this.webhooks = new SqliteWebhookStore(db)
    this.idempotency = new SqliteIdempotencyStore(db)
    this.leases = new SqliteLeaseStore(db)
    this.streamTickets = new SqliteStreamTicketStore(db)
  }

  /**
   * The connection batches commit on (see batchSink), opened at the first batch: a command that never
   * writes a plant never opens it. The checkpoint thread starts beside it, and from then on SQLite's
   * automatic checkpoint, which would copy the log back inside a commit on the event loop, is off on
   * this process's connections.
   */
  private connectWriter(path: string): Connection {
    const writer = new Database(path, { fileMustExist: true })
    try {
      writer.pragma('busy_timeout = 0')
      writer.pragma('synchronous = NORMAL')
      writer.pragma('foreign_keys = ON')
      writer.pragma('wal_autocheckpoint = 0')
    } catch (error) {
      writer.close()
      throw error
    }
    this.db.pragma('wal_autocheckpoint = 0')
    this.checkpointer ??= startCheckpoints(path)
    this.tokens.revocations.lookFrom(writer)
    return {
      db: writer,
      close: () => {
        this.tokens.revocations.lookFrom(undefined)
        writer.close()
      },
    }
  }

  /**
   * VACUUM INTO copies from one read snapshot, so the copy is consistent however many writes land
   * meanwhile, and unlike the page-by-page backup API it never restarts because another connection
   * wrote. Writers are not blocked (WAL); the copy is compact and has no WAL of its own.
   */
  async backup(file: string): Promise<void> {
    makeFolder(dirname(file))
    // Said before copying, which may take minutes.
    if (existsSync(file)) throw alreadyBackedUp(file)
    // The copy is written under a name of its own and takes the backup's name only once complete and
    // checked: a backup ended midway (killed, or by a timeout) would leave its file at the path, which
    // blocks the retry and, once its journal rolls back, is an empty database a restore would use.
    const partial = `${file}.${process.pid}.partial`
    rmSync(partial, { force: true })
    // Created empty here (VACUUM INTO accepts an empty file), 0600 as a new database file: the copy
    // holds the webhooks' signing secrets.
    closeSync(openSync(partial, 'wx', PRIVATE_MODE))
    try {
      try {
        this.db.prepare('VACUUM INTO ?').run(partial)
        const copy = new Database(partial, { readonly: true })
        try {
          const check = copy.pragma('quick_check', { simple: true })
          if (check !== 'ok')
            throw new Error(`the backup in ${file} failed its integrity check: ${String(check)}`)
        } finally {
          copy.close()
        }
        // VACUUM INTO syncs nothing it writes: a power loss right after a backup that succeeded
        // could leave a torn copy.
        syncFile(partial)
      } catch (error) {
        throw new Error(`backup to ${file} failed, and nothing was left there: ${(error as Error).message}`, {
          cause: error,
        })
      }
      if (!giveNewName(partial, file)) throw alreadyBackedUp(file)
      syncFolderOf(file)
    } finally {
      rmSync(partial, { force: true })
      rmSync(`${partial}-journal`, { force: true })
    }
  }

  async ping(): Promise<void> {
    this.file?.check()
    // After a failed fsync every create is refused until a restart: not ready, so that a load
    // balancer sends the traffic elsewhere.
    this.sink.check()
    this.db.prepare('SELECT 1').get()
  }

  async close(): Promise<void> {
    await this.plants.drain()
    await this.sink.close()
    await stopCheckpoints(this.checkpointer)
    closeDatabase(this.db, this.file)
  }
}

/** How often the checkpoint thread copies the log back. */
const CHECKPOINT_INTERVAL_MS = 1000

function startCheckpoints(path: string): Worker {
  const worker = new Worker(new URL('./checkpoint-thread.js', import.meta.url), {
    workerData: { path, intervalMs: CHECKPOINT_INTERVAL_MS },
  })
  // Never what keeps the process up; a thread that fails leaves the log to the periodic checkpoint.
  worker.unref()
  worker.on('error', () => {})
  return worker
}

async function stopCheckpoints(worker: Worker | undefined): Promise<void> {
  if (!worker || worker.threadId === -1) return
  const exited = new Promise((resolve) => worker.once('exit', resolve))
  worker.ref()
  worker.postMessage('close')
  await exited
}

function alreadyBackedUp(file: string): Error {
  return new Error(`${file} already exists; backups never overwrite`)
}

/** Opens (creating if needed) and migrates a SQLite database in durable WAL mode, as the whole store. */
export function openSqlite(options: SqliteOptions): SqliteStore {
  const { db, busyTimeoutMs, migrated } = openDatabase(options)
  // Until the writer's connection opens with its checkpoint thread, SQLite's automatic checkpoint
  // keeps the log short (a command's import); the periodic one (maintenance) also truncates it.
  return new SqliteStore(db, { path: options.path, busyTimeoutMs }, migrated)
}
