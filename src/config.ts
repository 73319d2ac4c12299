import { parseDuration } from './duration.js'
import { type DatabaseLocation, parseDatabaseUrl } from './store/open.js'

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
  idempotencyTtlMs: number
}

export interface Setting<K extends keyof ServeConfig = keyof ServeConfig> {
  key: K
  /** The long flag without dashes; the env name is the same in UPPER_SNAKE_CASE. */
  flag: string
  placeholder: string
  default: string | undefined
  description: string
  parse: (raw: string) => ServeConfig[K]
}

export function envName(flag: string): string {
  return flag.toUpperCase().replace(/-/g, '_')
}

function fail(flag: string, raw: string, expected: string): never {
  throw new ConfigError(`invalid --${flag} (${envName(flag)}) ${JSON.stringify(raw)}: expected ${expected}`)
}

function duration(flag: string) {
  return (raw: string): number => parseDuration(raw) ?? fail(flag, raw, 'a duration such as 500ms, 30s, 5m')
}

function positiveDuration(flag: string) {
  return (raw: string): number => {
    const ms = parseDuration(raw)
    return ms !== null && ms > 0 ? ms : fail(flag, raw, 'a duration above zero such as 500ms, 5s')
  }
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, kb: 1024, mb: 1024 * 1024 }

function parseSize(raw: string): number {
  const match = /^(\d{1,10})\s*(b|kb|mb)?$/i.exec(raw.trim())
  const bytes = match ? Number(match[1]) * (SIZE_UNITS[(match[2] ?? '').toLowerCase()] as number) : 0
  return bytes >= 1 && bytes <= 64 * 1024 * 1024
    ? bytes
    : fail('body-limit', raw, 'a size from 1 byte to 64mb, e.g. 65536 or 64kb')
}

export function parseDatabaseSetting(raw: string): DatabaseLocation {
  return parseDatabaseUrl(raw) ?? fail('database-url', raw, 'sqlite:PATH, sqlite::memory: or postgres://…')
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/plantstore.db'

/** Every serve setting: flag, env, default and parser in one table, so help, README and code agree. */
export const SERVE_SETTINGS: Setting[] = [
  {
    key: 'host',
    flag: 'host',
    placeholder: 'host',
    default: '127.0.0.1',
    description: 'address to listen on',
    parse: (raw) => (raw.trim() === '' ? fail('host', raw, 'a host name or address') : raw),
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
    description: 'PostgreSQL: most connections this instance opens (plus one that listens for revocations)',
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
    parse: parseSize,
  },
  {
    key: 'requestTimeoutMs',
    flag: 'request-timeout',
    placeholder: 'duration',
    default: '30s',
    description: 'time a client has to send a whole request',
    parse: duration('request-timeout'),
  },
  {
    key: 'headersTimeoutMs',
    flag: 'headers-timeout',
    placeholder: 'duration',
    default: '10s',
    description: 'time a client has to send the request headers',
    parse: duration('headers-timeout'),
  },
  {
    key: 'keepAliveTimeoutMs',
    flag: 'keep-alive-timeout',
    placeholder: 'duration',
    default: '5s',
    description: 'how long an idle keep-alive connection stays open',
    parse: duration('keep-alive-timeout'),
  },
  {
    key: 'shutdownTimeoutMs',
    flag: 'shutdown-timeout',
    placeholder: 'duration',
    default: '10s',
    description: 'on SIGTERM/SIGINT, how long in-flight requests may take before the process exits 1',
    parse: duration('shutdown-timeout'),
  },
  {
    key: 'drainDelayMs',
    flag: 'drain-delay',
    placeholder: 'duration',
    default: '0s',
    description:
      'on SIGTERM/SIGINT, how long to keep serving with /readyz at 503 before closing the port, so a load balancer stops sending first (counts within --shutdown-timeout)',
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
    parse: duration('idempotency-ttl'),
  },
  {
    key: 'bootstrapTokenFile',
    flag: 'bootstrap-token-file',
    placeholder: 'file',
    default: undefined,
    description: 'when the store has no token yet, create one with every scope and write it here (mode 0600)',
    parse: (raw) => raw,
  },
]

/** camelCase of a flag, as commander names parsed options. */
export function optionKey(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
}

/** Flags win over env, env over defaults; every value is checked here, once, at start. */
export function resolveServeConfig(
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): ServeConfig {
  const config: Partial<Record<keyof ServeConfig, unknown>> = {}
  for (const setting of SERVE_SETTINGS) {
    const raw = flags[optionKey(setting.flag)] ?? env[envName(setting.flag)] ?? setting.default
    config[setting.key] = raw === undefined ? undefined : setting.parse(raw)
  }
  return config as ServeConfig
}
