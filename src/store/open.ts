import { setTimeout as sleep } from 'node:timers/promises'
import { parse as parseConnectionString } from 'pg-connection-string'
import { StoreUnavailableError } from './errors.js'
import type { SqliteOptions } from './sqlite/open-database.js'
import type { Store, TokenDatabase } from './types.js'

export type DatabaseLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string }

/** Reads a DATABASE_URL: `sqlite:PATH`, `sqlite::memory:` or `postgres://…`; null when it is none. */
export function parseDatabaseUrl(given: string): DatabaseLocation | null {
  // A URL's scheme is case-insensitive (RFC 3986 §3.1): SQLITE:x.db and POSTGRES://… mean the same.
  const url = given.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, (scheme) => scheme.toLowerCase())
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length)
    // `sqlite://x.db` reads as a host named x.db: taken as the path //x.db it would be a file at the
    // root of the filesystem, not the relative one meant. sqlite:x.db and sqlite:///abs/x.db are clear.
    if (/^\/\/(?!\/)/.test(rest)) return null
    const path = rest.replace(/^\/\/(?=\/)/, '')
    // A path of spaces names no file any more than an empty one does: taken, it made a database
    // called " " in the working folder.
    return path.trim() === '' ? null : { kind: 'sqlite', path }
  }
  if (/^postgres(ql)?:\/\/./.test(url)) return postgresDriverReads(url) ? { kind: 'postgres', url } : null
  return null
}

/**
 * Whether the PostgreSQL driver can read the URL, asked of the driver's own parser, so that one it
 * cannot read (a port past 65535, a `#` in the password) is a bad setting (exit 2), not an "Invalid
 * URL" naming no setting once the store opens.
 */
function postgresDriverReads(url: string): boolean {
  try {
    parseConnectionString(url)
    return true
  } catch (error) {
    // A file the URL names that cannot be read is a problem of its own (postgresSettingsProblem).
    return namesUnreadableFile(error)
  }
}

/**
 * Whether the driver's parser failed reading a file the URL names (`sslrootcert=…`): a file-system
 * error, with its system call. The URL parser's own refusal has a code too (ERR_INVALID_URL).
 */
function namesUnreadableFile(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).syscall !== undefined
}

/** The `sslmode` values this PostgreSQL driver knows (libpq's `allow` is not among them). */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify']
/** With `uselibpqcompat=true` the driver reads them as libpq does, and knows no `no-verify`. */
const LIBPQ_SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full']

/**
 * What is wrong with a PostgreSQL URL's settings, said as what was expected instead; undefined when
 * the driver can use them. Otherwise either is found only once the store opens, naming neither the
 * setting nor the value: the driver takes an `sslmode` it does not know (a typo such as `disabled`) as a request
 * for TLS ("The server does not support SSL connections"), and reads the files `sslcert`, `sslkey`
 * and `sslrootcert` name as it parses the URL.
 */
export function postgresSettingsProblem(url: string): string | undefined {
  let settings: ReturnType<typeof parseConnectionString>
  try {
    settings = parseConnectionString(url)
  } catch (error) {
    return namesUnreadableFile(error)
      ? `ssl files this user can read (${(error as Error).message})`
      : undefined
  }
  const mode = settings.sslmode
  const known = settings.uselibpqcompat === 'true' ? LIBPQ_SSL_MODES : SSL_MODES
  // The driver takes an empty sslmode as none given.
  if (typeof mode !== 'string' || mode === '' || known.includes(mode)) return undefined
  return `an sslmode of ${known.join(', ')}, not ${JSON.stringify(mode)}`
}

export interface OpenOptions {
  busyTimeoutMs?: number
  /** PostgreSQL: most pooled connections. */
  poolSize?: number
  /** PostgreSQL: longest wait to connect or for one query. */
  timeoutMs?: number
  /** PostgreSQL: false when the process verifies no tokens, so needs no revocation listener. */
  watchRevocations?: boolean
  /**
   * PostgreSQL: false for a thread of a process that has migrated the database already (the webhook
   * dispatcher's). A migration runs without the per-query timeout and waits, unbounded, on another
   * instance's: a link that stalled while it ran would hold the thread for good. (SQLite's waits at
   * most its busy timeout.)
   */
  migrate?: boolean
  /** SQLite: the command only reads; see SqliteOptions.toRead. */
  toRead?: boolean
}

// Each store's code is loaded only once one is opened: reading a DATABASE_URL (the settings, every
// command's options) loads none of it.

/** Opens the store the location names and brings its schema up to date. */
export async function openStore(location: DatabaseLocation, options: OpenOptions = {}): Promise<Store> {
  if (location.kind === 'sqlite') {
    const { openSqlite } = await import('./sqlite/index.js')
    return openSqlite(sqliteOptions(location.path, options))
  }
  return openPostgresStore(location.url, options)
}

/**
 * As openStore, for the token commands: on SQLite only the tokens' code is loaded, not the plants',
 * events' and webhooks', which they never run. PostgreSQL's store is opened whole.
 */
export async function openTokens(
  location: DatabaseLocation,
  options: OpenOptions = {},
): Promise<TokenDatabase> {
  if (location.kind === 'sqlite') {
    const { openSqliteTokens } = await import('./sqlite/token-database.js')
    return openSqliteTokens(sqliteOptions(location.path, options))
  }
  return openPostgresStore(location.url, options)
}

function sqliteOptions(path: string, options: OpenOptions): SqliteOptions {
  return { path, busyTimeoutMs: options.busyTimeoutMs, toRead: options.toRead }
}

async function openPostgresStore(url: string, options: OpenOptions): Promise<Store> {
  const { openPostgres } = await import('./postgres/index.js')
  return openPostgres({
    url,
    poolSize: options.poolSize,
    timeoutMs: options.timeoutMs,
    watchRevocations: options.watchRevocations,
    migrate: options.migrate,
  })
}

export interface RetryOptions {
  /** Give up once this much time has passed since the first attempt. */
  timeoutMs: number
  onRetry?: (error: StoreUnavailableError, attempt: number) => void
}

/**
 * Opens the store, retrying while the database is unreachable (it may still be starting, as in a
 * container set started all at once). Any other error, such as a refused password, fails at once.
 */
export async function openStoreRetrying(
  location: DatabaseLocation,
  options: OpenOptions,
  retry: RetryOptions,
): Promise<Store> {
  const deadline = performance.now() + retry.timeoutMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await openStore(location, options)
    } catch (error) {
      if (!(error instanceof StoreUnavailableError)) throw error
      const left = deadline - performance.now()
      if (left <= 0) {
        throw new StoreUnavailableError(
          `${error.message} (gave up after ${Math.round(retry.timeoutMs / 1000)}s of retries, --database-startup-timeout)`,
          { cause: error },
        )
      }
      retry.onRetry?.(error, attempt)
      await sleep(Math.min(left, 250 * 2 ** Math.min(attempt - 1, 3)))
    }
  }
}
