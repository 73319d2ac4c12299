import { closeSync, constants, openSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { retryWhileBusySync } from './busy.js'
import { explainOpenFailure, explainWriteFailure } from './failures.js'
import { makeFolder } from './make-folder.js'
import { type Migration, migrate, pendingMigrations, refuseForeignDatabase } from './migrate.js'
import type { OpenedFile } from './opened-file.js'

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

/** A connection openDatabase made, with the busy timeout it now has and the migrations it applied. */
export interface OpenedDatabase {
  db: Database.Database
  busyTimeoutMs: number
  migrated: string[]
}

/**
 * The database holds the webhooks' signing secrets (a token only as a hash, but a signing secret has
 * to be kept as it is), so a new one is for its owner alone, as PostgreSQL keeps its data folder.
 * SQLite gives the -wal and -shm files it makes beside it the same mode. An existing file keeps
 * whatever mode it was given.
 */
export const PRIVATE_MODE = 0o600

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

/**
 * Opens (creating if needed) and migrates a SQLite database in durable WAL mode: the connection every
 * store on it (the whole store, index.ts, or its tokens alone, token-database.ts) is built on.
 */
export function openDatabase(options: SqliteOptions): OpenedDatabase {
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
  return { db, busyTimeoutMs, migrated }
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

/** Closes the connection openDatabase made; `file` is the file it opened (undefined for `:memory:`). */
export function closeDatabase(db: Database.Database, file: OpenedFile | undefined): void {
  if (!db.open) return
  if (file?.moved()) {
    // SQLite skips its closing checkpoint for a file that is no longer at its path, and leaves the
    // log there: the next open of whatever file is at the path now would take the old database's
    // pages from it (a restored copy overwritten, or corrupt), and a file moved away would lack
    // the creates acknowledged into the log. Copied into the opened file, then emptied, the log
    // holds nothing more. Best effort: another process still reading it keeps it as it is.
    try {
      db.pragma('wal_checkpoint(TRUNCATE)')
    } catch {}
  }
  db.close()
}
