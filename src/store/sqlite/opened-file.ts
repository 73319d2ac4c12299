import { statSync } from 'node:fs'
import { StoreUnavailableError } from '../errors.js'

/**
 * The database file a store opened. In WAL mode SQLite goes on committing to a file that was deleted
 * or renamed while open (it notices only in rollback-journal mode), so every write would be
 * acknowledged into a file that the next start, the CLI and a backup no longer find. Checked before a
 * write transaction: one stat, about a microsecond, once per batch of creates.
 */
export class OpenedFile {
  private readonly dev: number
  private readonly ino: number

  constructor(private readonly path: string) {
    const opened = statSync(path)
    this.dev = opened.dev
    this.ino = opened.ino
  }

  /** Throws StoreUnavailableError unless the file at the path is still the one that was opened. */
  check(): void {
    const now = statSync(this.path, { throwIfNoEntry: false })
    if (now && now.ino === this.ino && now.dev === this.dev) return
    throw new StoreUnavailableError(
      `the database file ${this.path} was ${now ? 'replaced' : 'moved or deleted'} while open; writes resume once it is back`,
    )
  }
}
