import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import { inDays, MAX_DURATION_MS, MAX_TIMER_MS, parseDuration } from './duration.js'
import { parseRateLimit, RATE_LIMIT_FORM } from './rate-limit-text.js'
import { type DatabaseLocation, parseDatabaseUrl, postgresSettingsProblem } from './store/open.js'
import type { TracingSettings } from './tracing/settings.js'

/** A setting that cannot be used; the CLI prints the message as one line and exits with 2. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface ServeConfig {
  host: string
  port: number
  database: DatabaseLocation
  databasePoolSize: number
  databaseTimeoutMs: number
  databaseStartupTimeoutMs: number
  bodyLimit: number
  requestTimeoutMs: number
  headersTimeoutMs: number
  keepAliveTimeoutMs: number
  shutdownTimeoutMs: number
  drainDelayMs: number
  logLevel: LogLevel
  bootstrapTokenFile: string | undefined
  /** Where the identity provider publishes its keys; absent: JWTs are not accepted. */
  jwtJwksUrl: string | undefined
  jwtIssuer: string | undefined
  jwtAudience: string | undefined
  jwtScopeClaim: string
  jwtClockToleranceMs: number
  workers: number
  webhookAllowPrivateUrls: boolean
  webhookRetryScheduleMs: number[]
  webhookTimeoutMs: number
  webhookDisableAfterMs: number
  webhookPollIntervalMs: number
  webhookMaxInFlight: number
  webhookLeaseTtlMs: number
  idempotencyTtlMs: number
  rateLimit: RateLimit | null
  unauthenticatedRateLimit: RateLimit | null
  maxEventLoopDelayMs: number
  maxConnections: number
  maxStreams: number
  maxHeaderSize: number
  corsOrigins: string[] | null
  trustProxy: string[] | null
  eventsRetentionMs: number
  tokensRetentionMs: number
  retentionIntervalMs: number
  walCheckpointIntervalMs: number
  /** From the OTEL_* variables (readTracingSettings), not a flag; absent: no tracing. */
  tracing?: TracingSettings | undefined
}

/** At most `max` requests per `windowMs`, counted per token, or per client address without one. */
export interface RateLimit {
  max: number
  windowMs: number
}

export interface Setting<K extends keyof ServeConfig = keyof ServeConfig> {
  key: K
  /** The long flag without dashes; the env name is the same in UPPER_SNAKE_CASE. */
  flag: string
  placeholder: string
  default: string | undefined
  description: string
  parse: (raw: string) => ServeConfig[K]
  /** A switch: the bare flag means true; a value (true/false) may still be given. */
  boolean?: true
}

export function envName(flag: string): string {
  return flag.toUpperCase().replace(/-/g, '_')
}

function fail(flag: string, raw: string, expected: string): never {
  throw new ConfigError(`invalid --${flag} (${envName(flag)}) ${JSON.stringify(raw)}: expected ${expected}`)
}

/**
 * A duration setting. Most are waited for by a timer, so they end at MAX_TIMER_MS (24d); those that
 * only set a date back or forward (retention cutoffs, lifetimes) pass `max: MAX_DURATION_MS`.
 */
/** `off`, read trimmed as durations are: `" off"` means what `" 5s"` would. */
const isOff = (raw: string) => raw.trim() === 'off'

function duration(flag: string, { min = 0, max = MAX_TIMER_MS, off = false } = {}) {
  const range =
    min >= 1000
      ? `at least ${min / 1000}s and at most ${inDays(max)}`
      : min > 0
        ? `above zero, at most ${inDays(max)}`
        : `at most ${inDays(max)}`
  const expected = `a duration such as ${min >= 1000 ? '30s, 5m' : '500ms, 30s, 5m'}${off ? ', or off' : ''}, ${range}`
  return (raw: string): number => {
    if (off && isOff(raw)) return 0
    const ms = parseDuration(raw, max)
    return ms !== null && ms >= min ? ms : fail(flag, raw, expected)
  }
}

function positiveDuration(flag: string) {
  return (raw: string): number => {
    const ms = parseDuration(raw, MAX_TIMER_MS)
    return ms !== null && ms > 0
      ? ms
      : fail(flag, raw, `a duration above zero such as 500ms, 5s, at most ${inDays(MAX_TIMER_MS)}`)
  }
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 * 1024 }

function size(flag: string, min: number, max: number, range: string) {
  return (raw: string): number => {
    const match = /^(\d{1,10})\s*(b|kb|mb)?$/i.exec(raw.trim())
    const bytes = match ? Number(match[1]) * (SIZE_UNITS[(match[2] ?? '').toLowerCase()] as number) : 0
    return bytes >= min && bytes <= max ? bytes : fail(flag, raw, `a size from ${range}`)
  }
}

function integer(flag: string, min: number, max: number) {
  return (raw: string): number => {
    const value = /^\d{1,10}$/.test(raw) ? Number(raw) : -1
    return value >= min && value <= max ? value : fail(flag, raw, `an integer from ${min} to ${max}`)
  }
}

/** `COUNT/WINDOW` such as `100/1s` or `6000/1m`; `off` turns limiting off. */
function rateLimit(flag: string) {
  return (raw: string): RateLimit | null =>
    isOff(raw) ? null : (parseRateLimit(raw) ?? fail(flag, raw, `${RATE_LIMIT_FORM}, or off`))
}

/** Comma list of origins (`https://app.example.com`); absent or `off` leaves CORS off. */
export function parseOrigins(raw: string): string[] | null {
  if (isOff(raw)) return null
  const origins = raw.split(',').map((o) => o.trim())
  for (const origin of origins) {
    let url: URL | undefined
    try {
      url = new URL(origin)
    } catch {}
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      fail('cors-origins', raw, 'a comma list of origins such as https://app.example.com, or off')
    }
  }
  return origins
}

/** `5s,5m,30m` → delays in ms before the 2nd, 3rd, 4th attempt; null when malformed or empty. */
export function parseRetrySchedule(text: string): number[] | null {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.length > 20) return null
  const delays = parts.map((p) => parseDuration(p))
  return delays.every((d): d is number => d !== null) ? delays : null
}

const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal']

/** Comma list of addresses or CIDR ranges (or loopback, linklocal, uniquelocal) of trusted proxies. */
export function parseTrustProxy(raw: string): string[] | null {
  if (isOff(raw)) return null
  const entries = raw.split(',').map((e) => e.trim())
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/')
    const family = isIP(address ?? '')
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))
    if (!PROXY_KEYWORDS.includes(entry) && (family === 0 || !bitsOk || extra !== undefined)) {
      fail('trust-proxy', raw, 'a comma list of addresses or CIDR ranges (or loopback), or off')
    }
  }
  return entries
}

export function parseDatabaseSetting(raw: string): DatabaseLocation {
  // The refusal quotes the URL, which goes to terminals and CI logs: never with its password, which
  // may also sit in the query (the driver reads `?password=`) or in a URL refused for its scheme.
  const shown = raw
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:).*@/i, '$1***@')
    .replace(/([?&](?:ssl)?password=)[^&]*/gi, '$1***')
  const location = parseDatabaseUrl(raw)
  const problem = location?.kind === 'postgres' ? postgresSettingsProblem(location.url) : undefined
  if (!location || problem) {
    fail('database-url', shown, problem ?? 'sqlite:PATH, sqlite::memory: or postgres://…')
  }
  return location
}

const MAX_WORKERS = 64

function parseWorkers(raw: string): number {
  // More CPUs than the bound (a large host) still means the bound, not a refusal.
  if (raw === 'auto') return Math.min(availableParallelism(), MAX_WORKERS)
  const n = /^\d{1,3}$/.test(raw) ? Number(raw) : 0
  return n >= 1 && n <= MAX_WORKERS ? n : fail('workers', raw, `auto or an integer from 1 to ${MAX_WORKERS}`)
}

function parseBoolean(flag: string) {
  return (raw: string): boolean => {
    const value = raw.trim().toLowerCase()
    if (value === 'true' || value === '1' || value === 'yes') return true
    if (value === 'false' || value === '0' || value === 'no') return false
    return fail(flag, raw, 'true or false')
  }
}

/**
 * A DNS name's label: letters, digits and inner hyphens (RFC 1123), at most 63 characters, and the
 * underscores container networks put in the names they resolve (`app_db_1`).
 */
const LABEL = /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$/

/**
 * An IP address, or a host name the resolver could look up: labels joined by dots, at most 253
 * characters, one trailing dot allowed. A name whose labels are all digits is a mistyped IPv4 address
 * (999.1.1.1), which the resolver would only report as a name it cannot find.
 */
function isHost(raw: string): boolean {
  if (isIP(raw) !== 0) return true
  const name = raw.endsWith('.') ? raw.slice(0, -1) : raw
  const labels = name.split('.')
  if (name.length === 0 || name.length > 253 || !labels.every((label) => LABEL.test(label))) return false
  return !labels.every((label) => /^\d+$/.test(label))
}

/** A JWKS URL: http or https, absolute, without credentials (they would be logged with the URL). */
function parseJwksUrl(raw: string): string {
  let url: URL | undefined
  try {
    url = new URL(raw.trim())
  } catch {}
  if (!url || !/^https?:$/.test(url.protocol) || url.username !== '' || url.password !== '') {
    fail(
      'jwt-jwks-url',
      url ? `${url.protocol}//${url.host}${url.pathname}` : raw,
      'an http or https URL without credentials',
    )
  }
  return url.href
}

function nonEmpty(flag: string, expected: string) {
  return (raw: string): string => (raw.trim() === '' ? fail(flag, raw, expected) : raw.trim())
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/plantstore.db'

/** Every serve setting: flag, env, default and parser in one table, so help, docs/configuration.md and code agree. */
export const SERVE_SETTINGS: Setting[] = [
  {
    key: 'host',
    flag: 'host',
    placeholder: 'host',
    default: '127.0.0.1',
    description: 'IP address or host name to listen on',
    parse: (raw) => (isHost(raw) ? raw : fail('host', raw, 'a host name or an IP address')),
  },
  {
    key: 'port',
    flag: 'port',
    placeholder: 'port',
    default: '8080',
    description: 'TCP port; 0 picks a free one',
    parse: (raw) => {
      const port = /^\d{1,5}$/.test(raw) ? Number(raw) : -1
      return port >= 0 && port <= 65535 ? port : fail('port', raw, 'an integer from 0 to 65535')
    },
  },
  {
    key: 'database',
    flag: 'database-url',
    placeholder: 'url',
    default: DEFAULT_DATABASE_URL,
    description: 'sqlite:PATH, sqlite::memory: (throwaway) or postgres://user:pass@host/db',
    parse: parseDatabaseSetting,
  },
  {
    key: 'databasePoolSize',
    flag: 'database-pool-size',
    placeholder: 'n',
    default: '10',
    description:
      'PostgreSQL: most connections in this instance’s pool (plus one that listens for revocations and answers /readyz, and two for the webhook dispatcher)',
    parse: (raw) => {
      const size = /^\d{1,4}$/.test(raw) ? Number(raw) : 0
      return size >= 1 && size <= 1000 ? size : fail('database-pool-size', raw, 'an integer from 1 to 1000')
    },
  },
  {
    key: 'databaseTimeoutMs',
    flag: 'database-timeout',
    placeholder: 'duration',
    default: '5s',
    description:
      'PostgreSQL: longest wait to connect or for one query; past it the request gets 503 with Retry-After',
    parse: positiveDuration('database-timeout'),
  },
  {
    key: 'databaseStartupTimeoutMs',
    flag: 'database-startup-timeout',
    placeholder: 'duration',
    default: '30s',
    description:
      'PostgreSQL: how long serve keeps retrying an unreachable database at start before it exits 1',
    parse: duration('database-startup-timeout'),
  },
  {
    key: 'bodyLimit',
    flag: 'body-limit',
    placeholder: 'size',
    default: '64kb',
    description: 'largest request body accepted; larger gets 413',
    parse: size('body-limit', 1, 64 * 1024 * 1024, '1 byte to 64mb, e.g. 65536 or 64kb'),
  },
  {
    key: 'requestTimeoutMs',
    flag: 'request-timeout',
    placeholder: 'duration',
    default: '30s',
    description: 'time a client has to send a whole request',
    parse: positiveDuration('request-timeout'),
  },
  {
    key: 'headersTimeoutMs',
    flag: 'headers-timeout',
    placeholder: 'duration',
    default: '10s',
    description: 'time a client has to send the request headers',
    parse: positiveDuration('headers-timeout'),
  },
  {
    key: 'keepAliveTimeoutMs',
    flag: 'keep-alive-timeout',
    placeholder: 'duration',
    default: '5s',
    description: 'how long an idle keep-alive connection stays open',
    parse: positiveDuration('keep-alive-timeout'),
  },
  {
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    placeholder: 'duration',
    default: '10s',
    description: 'on SIGTERM/SIGINT/SIGHUP, how long in-flight requests may take before the process exits 1',
    parse: duration('shutdown-timeout'),
  },
  {
    key: 'drainDelayMs',
    flag: 'drain-delay',
    placeholder: 'duration',
    default: '0s',
    description:
      'on SIGTERM/SIGINT/SIGHUP, how long to keep serving with /readyz at 503 before closing the port, so a load balancer stops sending first (counts within --shutdown-timeout)',
    parse: duration('drain-delay'),
  },
  {
    key: 'logLevel',
    flag: 'log-level',
    placeholder: 'level',
    default: 'info',
    description: `one of ${LOG_LEVELS.join(', ')}`,
    parse: (raw) =>
      (LOG_LEVELS as readonly string[]).includes(raw)
        ? (raw as LogLevel)
        : fail('log-level', raw, LOG_LEVELS.join(', ')),
  },
  {
    key: 'idempotencyTtlMs',
    flag: 'idempotency-ttl',
    placeholder: 'duration',
    default: '24h',
    description: 'how long the first answer to a create with an Idempotency-Key is kept for replay',
    parse: duration('idempotency-ttl', { max: MAX_DURATION_MS }),
  },
  {
    key: 'bootstrapTokenFile',
    flag: 'bootstrap-token-file',
    placeholder: 'file',
    default: undefined,
    description: 'when the store has no token yet, create one with every scope and write it here (mode 0600)',
    // Taken for "no file", an empty name would start a throwaway store with no token at all.
    parse: (raw) => (raw.trim() === '' ? fail('bootstrap-token-file', raw, 'a file name') : raw),
  },
  {
    key: 'jwtJwksUrl',
    flag: 'jwt-jwks-url',
    placeholder: 'url',
    default: undefined,
    description:
      'also accept JWTs signed by a key of this JSON Web Key Set (http or https URL of the identity provider); absent: only opaque tokens (docs/jwt.md)',
    parse: parseJwksUrl,
  },
  {
    key: 'jwtIssuer',
    flag: 'jwt-issuer',
    placeholder: 'issuer',
    default: undefined,
    description: 'the iss a JWT must carry, exactly (required with --jwt-jwks-url)',
    parse: nonEmpty('jwt-issuer', 'the issuer identifier, such as https://id.example.com/realms/main'),
  },
  {
    key: 'jwtAudience',
    flag: 'jwt-audience',
    placeholder: 'audience',
    default: undefined,
    description: 'the aud a JWT must carry, or hold among its audiences (required with --jwt-jwks-url)',
    parse: nonEmpty('jwt-audience', 'the audience this service is known by, such as plantstore'),
  },
  {
    key: 'jwtScopeClaim',
    flag: 'jwt-scope-claim',
    placeholder: 'claim',
    default: 'scope',
    description:
      'the JWT claim that holds the scopes: a space-separated string or an array of strings; unknown scopes are ignored',
    parse: nonEmpty('jwt-scope-claim', 'a claim name, such as scope or permissions'),
  },
  {
    key: 'jwtClockToleranceMs',
    flag: 'jwt-clock-tolerance',
    placeholder: 'duration',
    // Leeway for the clocks of this host and the identity provider, as OIDC libraries allow.
    default: '30s',
    description: 'how far a JWT’s exp and nbf may be off this host’s clock and still be accepted',
    parse: (raw) => {
      const ms = parseDuration(raw)
      return ms !== null && ms <= 300_000 ? ms : fail('jwt-clock-tolerance', raw, 'a duration from 0s to 5m')
    },
  },
  {
    key: 'workers',
    flag: 'workers',
    placeholder: 'n|auto',
    default: '1',
    description: 'processes serving the port together (node:cluster); auto = one per CPU, at most 64',
    parse: parseWorkers,
  },
  {
    key: 'rateLimit',
    flag: 'rate-limit',
    placeholder: 'count/window',
    // As self-hosted API servers do, an authenticated client is not throttled unless the operator
    // asks: a fixed default would cap one client far below what the service can serve.
    default: 'off',
    description:
      "requests allowed per token in each window, e.g. 6000/1m; off: not limited; a token's own limit (token create --rate-limit) takes its place",
    parse: rateLimit('rate-limit'),
  },
  {
    key: 'unauthenticatedRateLimit',
    flag: 'unauthenticated-rate-limit',
    placeholder: 'count/window',
    // On by default, so that guessing tokens stays slow.
    default: '100/1s',
    description:
      'requests allowed per client address without a valid token (missing, malformed, unknown, expired or revoked) in each window; off disables',
    parse: rateLimit('unauthenticated-rate-limit'),
  },
  {
    key: 'maxEventLoopDelayMs',
    flag: 'max-event-loop-delay',
    placeholder: 'duration',
    default: '1s',
    description: 'shed load (503 + Retry-After) while the event loop lags more than this; off disables',
    parse: duration('max-event-loop-delay', { min: 1, off: true }),
  },
  {
    key: 'maxConnections',
    flag: 'max-connections',
    placeholder: 'count',
    default: '1024',
    description: 'open TCP connections accepted at once; further ones are closed at once',
    parse: integer('max-connections', 1, 1_000_000),
  },
  {
    key: 'maxStreams',
    flag: 'max-streams',
    placeholder: 'count',
    default: '500',
    description:
      'open change streams (GET /events/stream) per process; further ones get 503 + Retry-After. Each holds a connection, so keep it below --max-connections',
    parse: integer('max-streams', 1, 1_000_000),
  },
  {
    key: 'maxHeaderSize',
    flag: 'max-header-size',
    placeholder: 'size',
    default: '16kb',
    description: 'largest request line plus headers; larger gets 431',
    parse: size('max-header-size', 1024, 1024 * 1024, '1kb to 1mb'),
  },
  {
    key: 'corsOrigins',
    flag: 'cors-origins',
    placeholder: 'list',
    default: 'off',
    description: 'comma list of browser origins allowed to call the API (CORS); off sends no CORS headers',
    parse: parseOrigins,
  },
  {
    key: 'trustProxy',
    flag: 'trust-proxy',
    placeholder: 'list',
    default: 'off',
    description:
      'comma list of proxy addresses or CIDR ranges whose X-Forwarded-For/-Proto/-Host are believed; off believes none',
    parse: parseTrustProxy,
  },
  {
    key: 'eventsRetentionMs',
    flag: 'events-retention',
    placeholder: 'duration',
    default: '7d',
    description:
      'outbox events older than this, and webhook deliveries that finished longer ago, are deleted by the retention sweep (an event a delivery still owes is kept)',
    parse: duration('events-retention', { min: 1, max: MAX_DURATION_MS }),
  },
  {
    key: 'tokensRetentionMs',
    flag: 'tokens-retention',
    placeholder: 'duration',
    default: '30d',
    description: 'tokens expired or revoked longer ago than this are deleted by the retention sweep',
    parse: duration('tokens-retention', { min: 1, max: MAX_DURATION_MS }),
  },
  {
    key: 'retentionIntervalMs',
    flag: 'retention-interval',
    placeholder: 'duration',
    default: '1h',
    description: 'how often the retention sweep runs (also once at start); off disables it',
    parse: duration('retention-interval', { min: 1000, off: true }),
  },
  {
    key: 'walCheckpointIntervalMs',
    flag: 'wal-checkpoint-interval',
    placeholder: 'duration',
    default: '1m',
    description:
      'SQLite: how often the write-ahead log is checkpointed and rewound, and truncated once writes pause; off disables it',
    parse: duration('wal-checkpoint-interval', { min: 1000, off: true }),
  },
  {
    key: 'webhookAllowPrivateUrls',
    flag: 'webhook-allow-private-urls',
    placeholder: 'bool',
    default: 'false',
    description:
      'let webhooks reach loopback, private, link-local and metadata addresses (local development only)',
    parse: parseBoolean('webhook-allow-private-urls'),
    boolean: true,
  },
  {
    key: 'webhookRetryScheduleMs',
    flag: 'webhook-retry-schedule',
    placeholder: 'durations',
    default: '5s,5m,30m,2h,5h,10h,10h',
    description: 'delays before each webhook retry (±20% jitter); after the last, the delivery is failed',
    parse: (raw) =>
      parseRetrySchedule(raw) ??
      fail('webhook-retry-schedule', raw, 'a comma list of 1 to 20 durations such as 5s,5m,30m'),
  },
  {
    key: 'webhookTimeoutMs',
    flag: 'webhook-timeout',
    placeholder: 'duration',
    default: '10s',
    description: 'how long a webhook receiver has to answer an attempt',
    parse: (raw) => {
      const ms = parseDuration(raw)
      return ms !== null && ms >= 1 && ms <= 300_000
        ? ms
        : fail('webhook-timeout', raw, 'a duration from 1ms to 5m')
    },
  },
  {
    key: 'webhookDisableAfterMs',
    flag: 'webhook-disable-after',
    placeholder: 'duration',
    default: '5d',
    description: 'a subscription whose attempts have all failed for this long is disabled',
    parse: duration('webhook-disable-after', { max: MAX_DURATION_MS }),
  },
  {
    key: 'webhookMaxInFlight',
    flag: 'webhook-max-in-flight',
    placeholder: 'n',
    default: '16',
    description:
      'most webhook attempts in flight to one subscription at once (256 over all); more keeps up with more events per second, at the receiver’s cost',
    parse: integer('webhook-max-in-flight', 1, 256),
  },
  {
    key: 'webhookPollIntervalMs',
    flag: 'webhook-poll-interval',
    placeholder: 'duration',
    default: '100ms',
    description:
      'how often the dispatcher looks for new events and due retries when idle (and, until one runs, whether there is work for one)',
    parse: duration('webhook-poll-interval', { min: 1 }),
  },
  {
    key: 'webhookLeaseTtlMs',
    flag: 'webhook-lease-ttl',
    placeholder: 'duration',
    default: '15s',
    description:
      'only the process holding the webhook dispatcher lease sends webhooks; it renews it every third of this, and when it dies another takes over within this',
    parse: (raw) => {
      const ms = parseDuration(raw)
      return ms !== null && ms >= 1000 && ms <= 3_600_000
        ? ms
        : fail('webhook-lease-ttl', raw, 'a duration from 1s to 1h')
    },
  },
]

/** camelCase of a flag, as commander names parsed options. */
export function optionKey(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
}

/**
 * Some of serve's settings, as serve would read them: flags win over env, env over defaults. Another
 * command that needs to know one (health, the port serve listens on) reads it from the same place.
 */
export function resolveSettings(
  settings: readonly Setting[],
  flags: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): {
  config: Partial<Record<keyof ServeConfig, unknown>>
  given: Partial<Record<keyof ServeConfig, string>>
} {
  const config: Partial<Record<keyof ServeConfig, unknown>> = {}
  const given: Partial<Record<keyof ServeConfig, string>> = {}
  for (const setting of settings) {
    const flag = flags[optionKey(setting.flag)]
    const raw = (flag === true ? 'true' : flag) ?? env[envName(setting.flag)] ?? setting.default
    if (typeof raw === 'string') given[setting.key] = raw
    config[setting.key] = raw === undefined || raw === false ? undefined : setting.parse(raw)
  }
  return { config, given }
}

/** Flags win over env, env over defaults; every value is checked here, once, at start. */
export function resolveServeConfig(
  flags: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): ServeConfig {
  const { config, given } = resolveSettings(SERVE_SETTINGS, flags, env)
  const resolved = config as ServeConfig
  if (resolved.drainDelayMs > 0 && resolved.drainDelayMs >= resolved.shutdownTimeoutMs) {
    // The delay counts within the timeout: every stop, however idle, would end in "shutdown timed
    // out" and exit 1, which supervisors read as a crash.
    throw new ConfigError(
      `--drain-delay (DRAIN_DELAY) ${given.drainDelayMs} must be shorter than --shutdown-timeout (SHUTDOWN_TIMEOUT) ${given.shutdownTimeoutMs}, within which it counts`,
    )
  }
  if (resolved.headersTimeoutMs > resolved.requestTimeoutMs) {
    // The whole request includes its headers: the longer headers timeout would never be reached.
    throw new ConfigError(
      `--headers-timeout (HEADERS_TIMEOUT) ${given.headersTimeoutMs} must not be longer than --request-timeout (REQUEST_TIMEOUT) ${given.requestTimeoutMs}, which includes the headers`,
    )
  }
  if (resolved.workers > 1 && resolved.database.kind === 'sqlite' && resolved.database.path === ':memory:') {
    // Each process would hold its own throwaway store: a plant created through one would not exist
    // for the others.
    throw new ConfigError(
      `--workers (WORKERS) ${resolved.workers} cannot share --database-url (DATABASE_URL) sqlite::memory: (each process would have its own store); use a sqlite file or postgres`,
    )
  }
  checkJwtSettings(resolved, given)
  return resolved
}

/** Issuer and audience are what make a JWT this service's: without them any token the key signed would do. */
function checkJwtSettings(config: ServeConfig, given: Partial<Record<keyof ServeConfig, string>>): void {
  const on = config.jwtJwksUrl !== undefined
  for (const [key, flag] of [
    ['jwtIssuer', 'jwt-issuer'],
    ['jwtAudience', 'jwt-audience'],
  ] as const) {
    if (on && config[key] === undefined) {
      throw new ConfigError(
        `--jwt-jwks-url (JWT_JWKS_URL) needs --${flag} (${envName(flag)}): a JWT is accepted only from the issuer and for the audience named`,
      )
    }
    if (!on && given[key] !== undefined) {
      throw new ConfigError(
        `--${flag} (${envName(flag)}) has no effect without --jwt-jwks-url (JWT_JWKS_URL), which turns JWTs on`,
      )
    }
  }
}
