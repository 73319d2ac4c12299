/**
 * The database could not be reached, or stopped responding within its timeout. The operation did not
 * complete as far as this process knows (a write may still have committed if the connection broke
 * during COMMIT), and it may succeed when retried later: the HTTP layer responds 503 with Retry-After.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}

/** Why a PostgreSQL database has no file backup, and what to use instead. */
export const NO_FILE_BACKUP_ON_POSTGRES =
  'backup copies SQLite databases only; for PostgreSQL use pg_dump (e.g. pg_dump -Fc -f plantstore.dump "$DATABASE_URL")'

/**
 * SQLite's errors that say the database cannot be used at the moment rather than that the request or
 * the code is wrong: the disk is full, another process held the write lock past the busy timeout, the
 * file cannot be written or read (made read-only, moved, an I/O error). SQLite raises them from any
 * statement on any connection, so they are recognised where a response is chosen instead of being
 * wrapped at every call; like an unreachable PostgreSQL they get a 503 with Retry-After, not 500.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(FULL|BUSY|IOERR|READONLY|CANTOPEN)(_|$)/

/**
 * PostgreSQL's counterparts, by SQLSTATE: a server that takes no writes any more (25006, a failover
 * that landed on a standby), one out of disk, memory or other resources (class 53), a statement
 * cancelled by an administrator (57014) and an I/O error on the server (class 58). The connection
 * still works, so they are not "unreachable": at start a read-only database is refused at once, not
 * retried, but mid-run they are the database's trouble, not the request's. So are a deadlock or a
 * serialization failure still met after a transaction's last try (40P01, 40001: the work may well
 * succeed once the transaction it crossed has ended) and a session the server ended for idling in a
 * transaction (25P03, past --database-timeout while the process was stalled).
 */
const POSTGRES_UNAVAILABLE = /^(25006|25P03|40001|40P01|53[0-9A-Z]{3}|57014|58[0-9A-Z]{3})$/

/** True for a database error that a later retry may not meet: a 503 with Retry-After. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (SQLITE_UNAVAILABLE.test(code) || POSTGRES_UNAVAILABLE.test(code))
}
