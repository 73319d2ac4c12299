import { realpathSync, type Stats, statSync } from 'node:fs'
import { StoreUnavailableError } from '../errors.js'

/**
 * The database file a store opened, and its write-ahead log. In WAL mode SQLite goes on committing to
 * a file that was deleted or renamed while open (it notices only in rollback-journal mode), so every
 * write would be acknowledged into a file that the next start, the CLI and a backup no longer find.
 * The log matters as much as the database: until a checkpoint copies them back, acknowledged creates
 * live only in it, and SQLite keeps appending to a deleted log that a crash then takes with it.
 * Checked before each batch of writes: two stats.
 */
export class OpenedFile {
  private readonly database: Stats
  /** Undefined when there was no log at open (a database not in WAL mode). */
  private readonly log: Stats | undefined
  /** The write-ahead log's path: beside the file a symbolic link leads to. */
  readonly logPath: string

  constructor(private readonly path: string) {
    this.database = statSync(path)
    this.logPath = `${realpathSync(path)}-wal`
    this.log = statSync(this.logPath, { throwIfNoEntry: false })
  }

  /** Whether the path no longer leads to the database file that was opened. */
  moved(): boolean {
    return !same(statSync(this.path, { throwIfNoEntry: false }), this.database)
  }

  /** Throws StoreUnavailableError unless the files at the paths are still the ones that were opened. */
  check(): void {
    const database = statSync(this.path, { throwIfNoEntry: false })
    if (!same(database, this.database)) {
      throw new StoreUnavailableError(
        `the database file ${this.path} was ${database ? 'replaced' : 'moved or deleted'} while open; writes resume once it is back`,
      )
    }
    if (this.log === undefined) return
    const log = statSync(this.logPath, { throwIfNoEntry: false })
    if (!same(log, this.log)) {
      // SQLite holds the old log open: writes can resume only with it back at its path, or after a
      // restart, whose clean close copies what it holds into the database.
      throw new StoreUnavailableError(
        `the write-ahead log ${this.logPath} was ${log ? 'replaced' : 'moved or deleted'} while open; writes resume once it is back or the service is restarted`,
      )
    }
  }
}

/** The file a store opened at `path`; undefined for `:memory:`, which has no file. */
export function openedFile(path: string): OpenedFile | undefined {
  return path === ':memory:' ? undefined : new OpenedFile(path)
}

function same(now: Stats | undefined, opened: Stats): boolean {
  return now !== undefined && now.ino === opened.ino && now.dev === opened.dev
}
