import { afterEach, describe, expect, it } from 'vitest'
import { envName, resolveServeConfig } from '../src/config.js'
import { makeApp } from './helpers/app.js'
import { runHere } from './helpers/cli.js'
import { sqliteKind } from './helpers/stores.js'

// The commands run in this process, through the entry point bin/plantstore calls (test/cli/usage.test.ts).
describe('operational settings and usage errors', () => {
  afterEach(() => {
    process.exitCode = undefined
  })

  it('has defaults for every new limit and schedule', () => {
    const config = resolveServeConfig({}, {})
    // A token is not throttled unless the operator asks; a client without a valid token is.
    expect(config.rateLimit).toBeNull()
    expect(config.unauthenticatedRateLimit).toEqual({ max: 100, windowMs: 1000 })
    expect(config.corsOrigins).toBeNull()
    expect(config.trustProxy).toBeNull()
    expect(config.maxConnections).toBe(1024)
    expect(config.maxHeaderSize).toBe(16 * 1024)
    expect(config.maxEventLoopDelayMs).toBe(1000)
    expect(config.walCheckpointIntervalMs).toBe(60_000)
    expect(config.webhookLeaseTtlMs).toBe(15_000)
    expect(config.webhookMaxInFlight).toBe(16)
  })

  it.each([
    [{ RATE_LIMIT: '6000/1m' }, 'rateLimit', { max: 6000, windowMs: 60_000 }],
    [{ RATE_LIMIT: 'off' }, 'rateLimit', null],
    [{ UNAUTHENTICATED_RATE_LIMIT: '10/1m' }, 'unauthenticatedRateLimit', { max: 10, windowMs: 60_000 }],
    [{ UNAUTHENTICATED_RATE_LIMIT: 'off' }, 'unauthenticatedRateLimit', null],
    [
      { CORS_ORIGINS: 'https://a.example.com,http://localhost:3000' },
      'corsOrigins',
      ['https://a.example.com', 'http://localhost:3000'],
    ],
    [{ TRUST_PROXY: '10.0.0.0/8,::1,loopback' }, 'trustProxy', ['10.0.0.0/8', '::1', 'loopback']],
    [{ MAX_HEADER_SIZE: '32kb' }, 'maxHeaderSize', 32 * 1024],
    [{ MAX_EVENT_LOOP_DELAY: 'off' }, 'maxEventLoopDelayMs', 0],
    [{ RETENTION_INTERVAL: 'off' }, 'retentionIntervalMs', 0],
    [{ WEBHOOK_LEASE_TTL: '1m' }, 'webhookLeaseTtlMs', 60_000],
  ])('reads %j from the environment', (env, key, value) => {
    expect(resolveServeConfig({}, env)[key as keyof ReturnType<typeof resolveServeConfig>]).toEqual(value)
  })

  it.each([
    '0.0.0.0',
    '::',
    '::1',
    'localhost',
    'api.example.com',
    'host-1.internal.',
    'xn--bcher-kva.example',
  ])('takes --host %s', (host) => {
    expect(resolveServeConfig({ host }, {}).host).toBe(host)
  })

  it('lets a flag win over the environment', () => {
    expect(resolveServeConfig({ rateLimit: '5/1s' }, { RATE_LIMIT: 'off' }).rateLimit).toEqual({
      max: 5,
      windowMs: 1000,
    })
  })

  it.each([
    ['--port', '70000'],
    ['--port', 'http'],
    // Refused by the resolver as a name it cannot find: told here as the value of --host.
    ['--host', '999.1.1.1'],
    ['--host', '10.0.0'],
    ['--host', 'bad host'],
    ['--host', '-leading.example'],
    ['--host', 'a..b'],
    ['--host', `${'a'.repeat(64)}.example`],
    ['--database-url', 'mysql://x'],
    // A host, not a path: sqlite:x.db or sqlite:///abs/x.db say which file.
    ['--database-url', 'sqlite://x.db'],
    ['--body-limit', '1gb'],
    ['--request-timeout', '10 minutes'],
    ['--log-level', 'loud'],
    ['--rate-limit', '100'],
    ['--rate-limit', '0/1s'],
    ['--rate-limit', '10/forever'],
    ['--unauthenticated-rate-limit', '0/1s'],
    ['--max-connections', '0'],
    ['--webhook-max-in-flight', '0'],
    ['--max-header-size', '10'],
    ['--cors-origins', 'example.com'],
    ['--cors-origins', 'https://a.example.com/path'],
    ['--trust-proxy', '10.0.0.0/99'],
    ['--trust-proxy', 'proxy.example.com'],
    ['--events-retention', '0s'],
    ['--request-timeout', '0s'],
    ['--headers-timeout', '0'],
    ['--keep-alive-timeout', '0ms'],
    ['--wal-checkpoint-interval', '10ms'],
    ['--webhook-lease-ttl', '500ms'],
    ['--webhook-lease-ttl', '2h'],
  ])('stops serve with exit 2 and one line naming the setting for %s %s', async (flag, value) => {
    // A later flag wins, so the bad value replaces the harmless defaults before it.
    const result = await runHere(['serve', '--port', '0', '--database-url', 'sqlite::memory:', flag, value])
    expect(result.code).toBe(2)
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(flag)
    expect(lines[0]).toContain(envName(flag.slice(2)))
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it.each([
    ['--retention-interval', '500ms', 'at least 1s and at most 24d'],
    ['--events-retention', '0s', 'above zero'],
  ])('says what %s accepts when %s is refused', async (flag, value, range) => {
    const result = await runHere(['serve', '--port', '0', '--database-url', 'sqlite::memory:', flag, value])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(range)
    // 500ms is below the interval's minimum, so it is not offered as an example.
    if (flag === '--retention-interval') expect(result.stderr).not.toContain('500ms,')
  })

  it.each([
    [['--drain-delay', '10s'], {}],
    [['--drain-delay', '15s'], {}],
    [['--shutdown-timeout', '2s'], { DRAIN_DELAY: '5s' }],
  ])(
    'refuses a drain delay %j %j that the shutdown timeout would cut short, with exit 2',
    async (args, env) => {
      const result = await runHere(
        ['serve', '--port', '0', '--database-url', 'sqlite::memory:', ...args],
        env,
      )
      expect(result.code).toBe(2)
      const lines = result.stderr.trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(
        /--drain-delay \(DRAIN_DELAY\) \d+s must be shorter than --shutdown-timeout \(SHUTDOWN_TIMEOUT\)/,
      )
    },
  )

  it('refuses a headers timeout longer than the request timeout, which includes the headers, with exit 2', async () => {
    const result = await runHere(
      ['serve', '--port', '0', '--database-url', 'sqlite::memory:', '--headers-timeout', '1m'],
      {
        REQUEST_TIMEOUT: '30s',
      },
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      'plantstore: --headers-timeout (HEADERS_TIMEOUT) 1m must not be longer than --request-timeout (REQUEST_TIMEOUT) 30s, which includes the headers\n',
    )
    expect(() => resolveServeConfig({ requestTimeout: '5s' }, {})).toThrow(
      '--headers-timeout (HEADERS_TIMEOUT) 10s must not be longer than --request-timeout (REQUEST_TIMEOUT) 5s',
    )
    expect(resolveServeConfig({ headersTimeout: '30s', requestTimeout: '30s' }, {}).headersTimeoutMs).toBe(
      30_000,
    )
  })

  it('serves with a headers timeout above five minutes when the request timeout is longer still', async () => {
    // Node's own request timeout is 5m: the server must be made with the one configured.
    const t = await makeApp(sqliteKind, {
      timeouts: { requestTimeoutMs: 600_000, headersTimeoutMs: 360_000 },
    })
    try {
      expect(t.app.server.requestTimeout).toBe(600_000)
      expect(t.app.server.headersTimeout).toBe(360_000)
    } finally {
      await t.close()
    }
    // test/process/server.test.ts starts a real server with the longest of both.
  })

  it('reads the database URL scheme in any case, as URLs do', () => {
    expect(resolveServeConfig({ databaseUrl: 'SQLite:data/x.db' }, {}).database).toEqual({
      kind: 'sqlite',
      path: 'data/x.db',
    })
    expect(resolveServeConfig({ databaseUrl: 'POSTGRES://u:p@127.0.0.1/db' }, {}).database).toEqual({
      kind: 'postgres',
      url: 'postgres://u:p@127.0.0.1/db',
    })
  })

  it('takes a drain delay shorter than the shutdown timeout, and no delay with any timeout', () => {
    expect(resolveServeConfig({ drainDelay: '5s' }, {}).drainDelayMs).toBe(5000)
    expect(resolveServeConfig({ shutdownTimeout: '0s' }, {}).shutdownTimeoutMs).toBe(0)
  })

  it('stops with exit 2 and one line for a bad value given through the environment', async () => {
    const result = await runHere(['serve', '--database-url', 'sqlite::memory:'], { RATE_LIMIT: 'lots' })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('RATE_LIMIT')])
  })

  it.each([
    [['serve', '--no-such-flag']],
    [['frobnicate']],
    [['import']],
    [['import', 'plants.txt', '--database-url', 'sqlite::memory:']],
    [['import', 'plants.jsonl', '--format', 'xml', '--database-url', 'sqlite::memory:']],
    [['token', 'create', '--name', 'x', '--scopes', 'root', '--database-url', 'sqlite::memory:']],
  ])('exits 2 with one line for the usage error %j', async (args) => {
    const result = await runHere(args)
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })
})
