import { StoreUnavailableError } from '../errors.js'

// Socket-level failures: the server is down, restarting, or the network between is broken.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])

// SQLSTATEs that mean "not now" rather than "never": class 08 (connection exception), the server
// shutting down or starting up, and too many connections.
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300'])

// The driver reports its own timeouts and broken connections without a code, only by message.
// "timeout expired" is a lone client's connect timeout (the migration's and the revocation
// listener's connections); the pool reports its own as "Connection terminated due to …".
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /^timeout expired$/,
  /^timeout exceeded when trying to connect/,
  /^Query read timeout/,
  /is not queryable/,
  /^Client was closed/,
]

/** True when the error says the database is unreachable, as opposed to a bad query or constraint. */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || TRANSIENT_SQLSTATES.has(code) || code.startsWith('08')) return true
  }
  if (error instanceof AggregateError) return error.errors.some(isConnectionError)
  return DRIVER_MESSAGES.some((pattern) => pattern.test(error.message))
}

/** Turns an unreachable-database error into the store's own error; anything else passes through. */
export function translate(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isConnectionError(error)) return error
  const reason = error instanceof Error ? error.message : String(error)
  return new StoreUnavailableError(`database unreachable: ${reason}`, { cause: error })
}

/** Runs a database operation, reporting an unreachable database as StoreUnavailableError. */
export async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw translate(error)
  }
}

/**
 * A connection the server refused for good (class 28: the password or the role refused; 3D000: no
 * such database) names only the user or the database, not which server said so: with several
 * databases configured, the operator could not tell which setting is wrong. The server and the
 * database are added (never the password); the code stays, so callers still tell it from an outage.
 * A search path that names no schema that exists (3F000) fails the first migration with "no schema
 * has been selected to create in", which names no setting: it is said what to do.
 */
export function explainRefusedConnection(error: unknown, url: string): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (!(error instanceof Error) || typeof code !== 'string') return error
  if (!code.startsWith('28') && code !== '3D000' && code !== '3F000') return error
  let where = 'the PostgreSQL server'
  try {
    const parsed = new URL(url)
    const database = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username)
    const host = parsed.host || parsed.searchParams.get('host') || 'localhost'
    where = `PostgreSQL at ${host}, database ${JSON.stringify(database)}`
  } catch {}
  const message =
    code === '3F000'
      ? `${where} has no schema for the tables: ${error.message} (the schema the URL's search_path names must be created first)`
      : `${where} refused the connection: ${error.message}`
  return Object.assign(new Error(message, { cause: error }), { code })
}
