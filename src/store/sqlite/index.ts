import { closeSync, constants, existsSync, linkSync, openSync, renameSync, rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { syncFile, syncFolderOf } from '../../file-sync.js'
import type { Store } from '../types.js'
import { retryWhileBusySync } from './busy.js'
import { SqliteEventStore } from './events.js'
import { SqliteIdempotencyStore } from './idempotency.js'
import { SqliteLeaseStore } from './leases.js'
import { SqliteMaintenanceStore } from './maintenance.js'
import { makeFolder } from './make-folder.js'
import { type Migration, migrate, pendingMigrations, refuseForeignDatabase } from './migrate.js'
import { OpenedFile } from './opened-file.js'
import { SqlitePlantStore } from './plants.js'
import { SqliteTokenStore } from './tokens.js'
import { SqliteWebhookStore } from './webhooks.js'
import { type BatchSink, batchSink, type Connection } from './writer.js'

export interface SqliteOptions {
  /** A file path, or ':memory:' for a throwaway store. */
  path: string
  /** How long a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number
  /**
   * For a command that only reads (export, backup, token list): an existing database whose schema
   * is current is opened without writing anything, so that its data can still be copied off a full
   * disk, or read by a user who may not write it. One that lacks migrations is migrated, as by any
   * other command.
   */
  toRead?: boolean
}

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
  /** The checkpoint thread, started with the writer's connection. */
  private checkpointer: Worker | undefined

  constructor(
    readonly db: Database.Database,
    options: { path: string; busyTimeoutMs: number },
    readonly migrated: readonly string[] = [],
  ) {
    const file = options.path === ':memory:' ? undefined : new OpenedFile(options.path)
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
    this.events = new SqliteEventStore(db)
    this.maintenance = new SqliteMaintenanceStore(db)
    this.plants = new SqlitePlantStore(db, this.sink, () => this.events.appended(), checkFile)
    this.tokens = new SqliteTokenStore(db)
    this.webhooks = new SqliteWebhookStore(db)
    this.idempotency = new SqliteIdempotencyStore(db)
    this.leases = new SqliteLeaseStore(db)
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
    return { db: writer, close: () => writer.close() }
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
    // checked: a backup ended midway (killed, or by a timeout) left its file at the path, which
    // blocked the retry and, once its journal rolled back, was an empty database a restore would use.
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
      if (!giveName(partial, file)) throw alreadyBackedUp(file)
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
    if (!this.db.open) return
    if (this.file?.moved()) {
      // SQLite skips its closing checkpoint for a file that is no longer at its path, and leaves the
      // log there: the next open of whatever file is at the path now would take the old database's
      // pages from it (a restored copy overwritten, or corrupt), and a file moved away would lack
      // the creates acknowledged into the log. Copied into the opened file, then emptied, the log
      // holds nothing more. Best effort: another process still reading it keeps it as it is.
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)')
      } catch {}
    }
    this.db.close()
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

/**
 * Gives the finished copy the backup's name, unless a file appeared there meanwhile (then false): a
 * link fails where a rename would replace it. A file system without links (FAT) gets a rename after
 * a last look.
 */
function giveName(partial: string, file: string): boolean {
  try {
    linkSync(partial, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error
    if (existsSync(file)) return false
    renameSync(partial, file)
    return true
  }
}

/**
 * The database holds the webhooks' signing secrets (a token only as a hash, but a signing secret has
 * to be kept as it is), so a new one is for its owner alone, as PostgreSQL keeps its data folder.
 * SQLite gives the -wal and -shm files it makes beside it the same mode. An existing file keeps
 * whatever mode it was given.
 */
const PRIVATE_MODE = 0o600

function createPrivately(path: string): void {
  try {
    // An empty file is an empty database to SQLite. Not exclusive: a path that is a symbolic link to
    // a file not made yet (a volume mounted elsewhere) is a database SQLite creates there, 0644 when
    // not made here first. Read-only and non-blocking, an existing file (or a pipe) is left as it is.
    closeSync(openSync(path, constants.O_RDONLY | constants.O_CREAT | constants.O_NONBLOCK, PRIVATE_MODE))
  } catch {
    // It exists, or cannot be made here: SQLite's own open then opens it, or says why it cannot.
  }
}

/** Opens (creating if needed) and migrates a SQLite database in durable WAL mode. */
export function openSqlite(options: SqliteOptions): SqliteStore {
  if (options.path.endsWith('/')) {
    // SQLite drops the slash: `sqlite:data/` would create and migrate a database file named `data`,
    // and then fail to find the `data/` it was given.
    throw new Error(
      `cannot open ${options.path}: it names a folder; name the database file in it, such as ${options.path}plantstore.db`,
    )
  }
  if (options.path !== ':memory:') {
    try {
      makeFolder(dirname(options.path))
    } catch (error) {
      // A parent this user may not write, or a file where a folder should be (EACCES, ENOTDIR).
      throw new Error(
        `cannot open ${options.path} (${(error as Error).message}): its folder does not exist and cannot be created`,
        { cause: error },
      )
    }
  }
  let db: Database.Database
  try {
    if (options.toRead) {
      db = openToRead(options.path)
    } else {
      if (options.path !== ':memory:') createPrivately(options.path)
      db = new Database(options.path)
      // Opening and migrating always wait for another process's lock; the option applies afterwards.
      db.pragma('busy_timeout = 5000')
    }
  } catch (error) {
    throw explainOpenFailure(error, options.path)
  }
  let migrated: string[] = []
  try {
    refuseForeignDatabase(db, options.path)
    db.pragma('synchronous = FULL')
    db.pragma('foreign_keys = ON')
    // Asked before anything writes: the switch to WAL below rewrites the header of a file in
    // rollback-journal mode (a backup copy is one), so a database a newer release migrated would be
    // changed by the very start that refuses it.
    const pending = pendingMigrations(db)
    if (!options.toRead || pending.length !== 0) {
      try {
        // WAL lets readers run beside the writer; FULL fsyncs the WAL on every commit, so an
        // acknowledged create survives power loss, not just a process crash.
        // Processes opening a new database at once (a server starting and a `token create` beside
        // it) each switch it to WAL, and SQLite may refuse one at once with SQLITE_BUSY instead of
        // waiting on its busy handler (processes started together on new files). Tried
        // again a moment later, the switch is done, or needs doing no more.
        retryWhileBusySync(() => db.pragma('journal_mode = WAL'))
        migrated = migrate(db).map((m) => m.name)
      } catch (error) {
        const explained = explainWriteFailure(error, options.path)
        throw options.toRead && explained !== error ? needsMigrating(explained as Error, pending) : error
      }
    }
  } catch (error) {
    db.close()
    throw explainOpenFailure(error, options.path)
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000
  db.pragma(`busy_timeout = ${busyTimeoutMs}`)
  // Until the writer's connection opens with its checkpoint thread, SQLite's automatic checkpoint
  // keeps the log short (a command's import); the periodic one (maintenance) also truncates it.
  return new SqliteStore(db, { path: options.path, busyTimeoutMs }, migrated)
}

/**
 * Opens an existing database to read. A WAL database is read through its `-shm` file, which the
 * first connection after the last one closed creates and sizes (32 KiB): on a full disk it cannot,
 * and every read fails (SQLITE_IOERR_SHMSIZE) though nothing else needs writing. No other process
 * has the database open then (its `-shm` would be sized), so the connection takes the file for
 * itself, which keeps the index in its own memory instead (locking_mode EXCLUSIVE).
 */
function openToRead(path: string): Database.Database {
  const open = (exclusive: boolean) => {
    const db = new Database(path, { fileMustExist: true })
    try {
      db.pragma('busy_timeout = 5000')
      if (exclusive) db.pragma('locking_mode = EXCLUSIVE')
      db.prepare('SELECT count(*) FROM sqlite_schema').get()
      return db
    } catch (error) {
      db.close()
      throw error
    }
  }
  try {
    return open(false)
  } catch (error) {
    if (!String((error as { code?: unknown }).code).startsWith('SQLITE_IOERR_SHM')) throw error
    try {
      return open(true)
    } catch {
      throw error
    }
  }
}

/**
 * A command that only reads could have read the database as it is, had its schema been current: it
 * says that the missing step is a migration, and which command takes it.
 */
function needsMigrating(error: Error, pending: Migration[]): Error {
  return new Error(
    `${error.message}; its schema must be migrated first (${pending.map((m) => m.name).join(', ')} not applied): run \`plantstore migrate\` once it can be written`,
    { cause: error },
  )
}

/**
 * SQLite's errors at open do not say which file, nor what to do: a read-only one that the folder
 * matters too (WAL files), a full one that it is the disk, not the database, that has no room, and
 * "unable to open database file" (a folder this user may not enter, a file it may not read) nothing.
 */
export function explainOpenFailure(error: unknown, path: string): unknown {
  const explained = explainWriteFailure(error, path)
  if (explained !== error) return explained
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return error
  const said = (error as Error).message
  if (code === 'SQLITE_CANTOPEN') {
    return new Error(
      `cannot open ${path} (${said}): it must be a file (or the name of a new one) that this user may read and write, in a folder it may enter`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_NOTADB') {
    return new Error(`${path} is not a SQLite database (${said}): it was left as it was`, {
      cause: error,
    })
  }
  // A file cut short or overwritten in part: the bare "database disk image is malformed" named
  // neither the file nor the way back.
  if (code.startsWith('SQLITE_CORRUPT')) {
    return new Error(`${path} is damaged (${said}): restore a backup of it (see Backup and restore)`, {
      cause: error,
    })
  }
  return error
}

/**
 * A write that fails once a command is under way (an import that fills the disk, a file made
 * read-only meanwhile) says as little as one at open ("database or disk is full", "disk I/O error"):
 * which file, and what to do, are said alike.
 */
export function explainWriteFailure(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown }).code
  if (typeof code !== 'string') return error
  const said = (error as Error).message
  if (code.startsWith('SQLITE_READONLY')) {
    return new Error(
      `cannot write to ${path} (${said}): this user needs write access to the file and its folder`,
      { cause: error },
    )
  }
  if (code === 'SQLITE_FULL') {
    return new Error(`cannot write to ${path} (${said}): the disk holding it has no room left`, {
      cause: error,
    })
  }
  // The `-shm` file a WAL database is used through (32 KiB, made by the first connection to open it)
  // could not be sized: a full disk, or a file-size limit.
  if (code === 'SQLITE_IOERR_SHMSIZE') {
    return new Error(
      `cannot write to ${path}-shm (${said}): the disk holding the database may have no room left`,
      { cause: error },
    )
  }
  // A failing disk, or a file past the process's size limit (ulimit -f).
  if (code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC') {
    return new Error(`cannot write to ${path} (${said})`, { cause: error })
  }
  return error
}
