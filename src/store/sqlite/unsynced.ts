import type { Database } from 'better-sqlite3'

/**
 * Runs a write on a connection that otherwise commits with synchronous=FULL, with its commit left
 * unsynced (NORMAL): for work whose loss to a power cut only means doing it again (a retention
 * delete, a dispatcher's bookkeeping), so that its commit does not wait for the disk on the caller's
 * thread. The next fsynced commit of any connection makes it durable too, as the log is appended in
 * order. Every statement here is synchronous, so nothing else commits on the connection meanwhile.
 *
 * The pragmas are compiled anew each time (about 5 µs the pair): SQLite applies this pragma when it
 * compiles the statement, so the first run of a prepared `PRAGMA synchronous = NORMAL` changed
 * nothing, and the first unsynced write still waited for its fsync.
 */
export function unsyncedWrites(db: Database): <T>(work: () => T) => T {
  return (work) => {
    db.exec('PRAGMA synchronous = NORMAL')
    try {
      return work()
    } finally {
      db.exec('PRAGMA synchronous = FULL')
    }
  }
}
