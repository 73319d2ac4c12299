import type { Database, Statement } from 'better-sqlite3'

/** The epoch's two statements on one connection. */
interface Watch {
  db: Database
  dataVersion: Statement
  readEpoch: Statement
  /** The data_version at this connection's last read of the epoch; -1: read it at the next look. */
  seen: number
}

function watchOn(db: Database): Watch {
  return {
    db,
    // data_version moves when a connection other than this one commits: only then is the epoch worth
    // reading.
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    readEpoch: db.prepare("SELECT value FROM meta WHERE key = 'token_epoch'").pluck(),
    seen: -1,
  }
}

/**
 * The token revocation epoch, read again only when another connection has committed since the last
 * look. Asked on the connection that commits the creates once it is open: every other commit (a
 * revocation by the CLI, another worker, this process's own connection) moves its data_version,
 * while the creates' group commits, the bulk of all commits, do not. Asked on the connection that
 * reads, each of those commits would move the version and the epoch's read after it would find that
 * connection's page cache emptied by the commit: a full read from the log per turn of the event loop.
 */
export class SqliteRevocationEpoch {
  private readonly own: Watch
  private watch: Watch
  private epoch = 0

  constructor(db: Database) {
    this.own = watchOn(db)
    this.watch = this.own
  }

  /**
   * Looks from `writer` from now on, the connection the creates commit on; undefined: from the
   * store's own connection again (the writer is being closed).
   */
  lookFrom(writer: Database | undefined): void {
    // A new watch reads the epoch at its first look: two connections' versions are not comparable.
    this.watch = writer === undefined ? this.own : watchOn(writer)
  }

  /** After this connection's own revocation, which its data_version does not show. */
  forget(): void {
    this.own.seen = -1
    this.watch.seen = -1
  }

  read(): number {
    const watch = this.watch
    // A connection inside a transaction reads that transaction's snapshot, not the latest commit.
    if (watch !== this.own && !watch.db.inTransaction) {
      try {
        return this.readOn(watch)
      } catch {
        // The writer has no busy timeout: a read it cannot start at once is made where one waits.
        watch.seen = -1
      }
    }
    return this.readOn(this.own)
  }

  private readOn(watch: Watch): number {
    const version = watch.dataVersion.get() as number
    if (version !== watch.seen) {
      this.epoch = watch.readEpoch.get() as number
      // Set once the epoch is read: a read that fails leaves the next look to read again.
      watch.seen = version
    }
    return this.epoch
  }
}
