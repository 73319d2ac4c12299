import { describe, expect, it } from 'vitest'
import { ConfigError, parseDatabaseSetting, resolveServeConfig } from '../src/config.js'
import { runHere } from './helpers/cli.js'

describe('the idempotency-ttl setting', () => {
  it('defaults to 24 hours and reads a flag or the environment', () => {
    expect(resolveServeConfig({}, {}).idempotencyTtlMs).toBe(24 * 60 * 60 * 1000)
    expect(resolveServeConfig({ idempotencyTtl: '90m' }, {}).idempotencyTtlMs).toBe(90 * 60 * 1000)
    expect(resolveServeConfig({}, { IDEMPOTENCY_TTL: '2d' }).idempotencyTtlMs).toBe(2 * 86_400_000)
    expect(() => resolveServeConfig({ idempotencyTtl: 'forever' }, {})).toThrow(ConfigError)
    expect(resolveServeConfig({ idempotencyTtl: '36500d' }, {}).idempotencyTtlMs).toBe(36_500 * 86_400_000)
    expect(() => resolveServeConfig({ idempotencyTtl: '36501d' }, {})).toThrow(ConfigError)
  })

  it('takes its longest value in any unit, however many digits that needs', () => {
    const longest = 36_500 * 86_400_000
    for (const text of [
      `${longest / 1000}s`,
      `${longest}ms`,
      `${longest / 60_000}m`,
      `${longest / 3_600_000}h`,
    ])
      expect([text, resolveServeConfig({ idempotencyTtl: text }, {}).idempotencyTtlMs]).toEqual([
        text,
        longest,
      ])
    for (const text of [`${longest / 1000 + 1}s`, `${longest + 1}ms`, `${'9'.repeat(40)}ms`])
      expect(() => resolveServeConfig({ idempotencyTtl: text }, {})).toThrow(ConfigError)
  })

  it('is listed by serve --help and refused with exit code 2 when invalid', async () => {
    const help = await runHere(['serve', '--help'])
    expect(help.stdout).toContain('--idempotency-ttl <duration>')
    expect(help.stdout).toContain('IDEMPOTENCY_TTL')
    const bad = await runHere([
      'serve',
      '--port',
      '0',
      '--database-url',
      'sqlite::memory:',
      '--idempotency-ttl',
      'x',
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--idempotency-ttl')
  })
})

describe('the database-url setting', () => {
  it('refuses a SQLite path of spaces, as it refuses an empty one, with exit 2', async () => {
    expect(() => parseDatabaseSetting('sqlite:')).toThrow(ConfigError)
    expect(() => parseDatabaseSetting('sqlite:  ')).toThrow(ConfigError)
    expect(() => resolveServeConfig({}, { DATABASE_URL: 'sqlite:\t' })).toThrow(
      /--database-url \(DATABASE_URL\)/,
    )
    // token list creates no database, so the run leaves no file behind whichever way it goes.
    const listed = await runHere(['token', 'list', '--database-url', 'sqlite: '])
    expect(listed.code).toBe(2)
    expect(listed.stderr).toBe(
      'plantstore: invalid --database-url (DATABASE_URL) "sqlite: ": expected sqlite:PATH, sqlite::memory: or postgres://…\n',
    )
  })

  it('takes an empty sslmode as none given, as the driver does', () => {
    const url = 'postgres://u@127.0.0.1/db?sslmode='
    expect(parseDatabaseSetting(url)).toEqual({ kind: 'postgres', url })
    expect(() => parseDatabaseSetting(`${url}x`)).toThrow(/not "x"$/)
  })

  it('refuses a URL the driver cannot parse as no URL it knows, not as an ssl file it cannot read', () => {
    for (const url of ['postgres://u@127.0.0.1:99999/db', 'postgres://u@[::1/db']) {
      expect(() => parseDatabaseSetting(url)).toThrow(
        /: expected sqlite:PATH, sqlite::memory: or postgres:\/\/…$/,
      )
    }
    expect(() => parseDatabaseSetting('postgres://u@127.0.0.1/db?sslrootcert=/nonexistent/ca.pem')).toThrow(
      /expected ssl files this user can read \(ENOENT: /,
    )
  })
})

describe('off, written with spaces around it', () => {
  it('is off, as a duration with the same spaces is that duration', () => {
    const env = {
      MAX_EVENT_LOOP_DELAY: ' off ',
      RATE_LIMIT: ' off',
      CORS_ORIGINS: 'off ',
      TRUST_PROXY: ' off',
    }
    const config = resolveServeConfig({}, env)
    expect(config.maxEventLoopDelayMs).toBe(0)
    expect(config.rateLimit).toBeNull()
    expect(config.corsOrigins).toBeNull()
    expect(config.trustProxy).toBeNull()
    expect(resolveServeConfig({}, { MAX_EVENT_LOOP_DELAY: ' 5s ' }).maxEventLoopDelayMs).toBe(5000)
  })
})

describe('the ranges docs/configuration.md gives for counts, sizes and proxy ranges', () => {
  it('take both ends and refuse one past either', () => {
    const ok = (env: Record<string, string>) => resolveServeConfig({}, env)
    const refused = (env: Record<string, string>) => expect(() => ok(env)).toThrow(ConfigError)
    expect(ok({ MAX_CONNECTIONS: '1' }).maxConnections).toBe(1)
    expect(ok({ MAX_CONNECTIONS: '1000000' }).maxConnections).toBe(1_000_000)
    refused({ MAX_CONNECTIONS: '0' })
    refused({ MAX_CONNECTIONS: '1000001' })
    expect(ok({ WEBHOOK_MAX_IN_FLIGHT: '1' }).webhookMaxInFlight).toBe(1)
    expect(ok({ WEBHOOK_MAX_IN_FLIGHT: '256' }).webhookMaxInFlight).toBe(256)
    refused({ WEBHOOK_MAX_IN_FLIGHT: '0' })
    refused({ WEBHOOK_MAX_IN_FLIGHT: '257' })
    expect(ok({ BODY_LIMIT: '1' }).bodyLimit).toBe(1)
    expect(ok({ BODY_LIMIT: '64mb' }).bodyLimit).toBe(64 * 1024 * 1024)
    refused({ BODY_LIMIT: '0' })
    refused({ BODY_LIMIT: String(64 * 1024 * 1024 + 1) })
    expect(ok({ MAX_HEADER_SIZE: '1kb' }).maxHeaderSize).toBe(1024)
    expect(ok({ MAX_HEADER_SIZE: '1mb' }).maxHeaderSize).toBe(1024 * 1024)
    refused({ MAX_HEADER_SIZE: '1023' })
    refused({ MAX_HEADER_SIZE: String(1024 * 1024 + 1) })
    expect(ok({ TRUST_PROXY: '10.0.0.1/32,::1/128' }).trustProxy).toEqual(['10.0.0.1/32', '::1/128'])
    refused({ TRUST_PROXY: '10.0.0.1/33' })
    refused({ TRUST_PROXY: '::1/129' })
  })
})
