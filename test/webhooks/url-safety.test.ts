import { describe, expect, it } from 'vitest'
import { ConfigError, parseRetrySchedule, resolveServeConfig } from '../../src/config.js'
import { nextAttemptDelay } from '../../src/webhooks/retry.js'
import {
  guardedLookup,
  isForbiddenAddress,
  plainLookup,
  type Resolver,
  refusedHost,
} from '../../src/webhooks/url-safety.js'

describe('forbidden webhook addresses', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '0.0.0.0',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.0.1',
    '169.254.169.254',
    '100.100.100.200',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:c0a8:101::1',
    '::ffff:0:127.0.0.1',
    '::ffff:0:a00:1',
    '64:ff9b:1::a00:1',
    '64:ff9b:1:ffff::8.8.8.8',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001::1',
    '192.88.99.1',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1%eth0',
    'ff02::1',
    '[::1]',
    'not-an-address',
    '0177.0.0.1',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true)
  })

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '172.32.0.1',
    '::ffff:0:8.8.8.8',
    '64:ff9b::808:808',
    '2001:4860:4860::8888',
  ])('allows the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false)
  })
})

describe('hosts refused before any lookup', () => {
  it.each([
    ['localhost', 'localhost is a local name'],
    ['LOCALHOST...', 'localhost is a local name'],
    ['a.b.LocalHost.', 'a.b.localhost is a local name'],
    ['[::1]', '::1 is a forbidden address'],
    ['127.0.0.1', '127.0.0.1 is a forbidden address'],
  ])('refuses %s: %s', (host, why) => {
    expect(refusedHost(host)).toBe(why)
  })

  it.each(['localhost.example.com', 'notlocalhost', 'example.com', '93.184.216.34', '[2606:4700::1]'])(
    'leaves %s to the lookup',
    (host) => {
      expect(refusedHost(host)).toBeUndefined()
    },
  )
})

describe('connection-time lookup', () => {
  const lookupOnce = (lookup: ReturnType<typeof guardedLookup>, host: string, all: boolean) =>
    new Promise<{ error: Error | null; result: unknown }>((resolve) => {
      ;(lookup as unknown as (h: string, o: object, cb: (...a: unknown[]) => void) => void)(
        host,
        { all },
        (error: unknown, address: unknown, family: unknown) =>
          resolve({ error: error as Error | null, result: all ? address : [address, family] }),
      )
    })
  const resolver: Resolver = async (host) => {
    if (host === 'mixed.example')
      return [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ]
    if (host === 'public.example') return [{ address: '93.184.216.34', family: 4 }]
    if (host === 'empty.example') return []
    throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
  }

  it('refuses a host when any of its addresses is forbidden', async () => {
    const { error } = await lookupOnce(guardedLookup(resolver), 'mixed.example', true)
    expect(error?.message).toMatch(/forbidden address \(10\.0\.0\.1\)/)
  })

  it('answers in both lookup callback forms for an allowed host', async () => {
    expect((await lookupOnce(guardedLookup(resolver), 'public.example', true)).result).toEqual([
      { address: '93.184.216.34', family: 4 },
    ])
    expect((await lookupOnce(guardedLookup(resolver), 'public.example', false)).result).toEqual([
      '93.184.216.34',
      4,
    ])
  })

  it('passes resolution failures on, checked or not', async () => {
    expect((await lookupOnce(guardedLookup(resolver), 'nowhere.example', false)).error?.message).toMatch(
      /ENOTFOUND/,
    )
    expect((await lookupOnce(guardedLookup(resolver), 'empty.example', false)).error?.message).toMatch(
      /no address/,
    )
    expect((await lookupOnce(plainLookup(resolver), 'empty.example', false)).error?.message).toMatch(
      /no address/,
    )
    expect((await lookupOnce(plainLookup(resolver), 'nowhere.example', true)).error?.message).toMatch(
      /ENOTFOUND/,
    )
    expect((await lookupOnce(plainLookup(resolver), 'mixed.example', true)).result).toHaveLength(2)
  })
})

describe('webhook settings', () => {
  it('reads the retry schedule, timeout and private-URL switch from flags or env', () => {
    const config = resolveServeConfig(
      { webhookRetrySchedule: '1s, 2m ,3h', webhookAllowPrivateUrls: true },
      { WEBHOOK_TIMEOUT: '2s' },
    )
    expect(config.webhookRetryScheduleMs).toEqual([1000, 120_000, 10_800_000])
    expect(config.webhookAllowPrivateUrls).toBe(true)
    expect(config.webhookTimeoutMs).toBe(2000)
    const defaults = resolveServeConfig({}, {})
    expect(defaults.webhookRetryScheduleMs).toHaveLength(7)
    expect(defaults.webhookAllowPrivateUrls).toBe(false)
    expect(defaults.webhookDisableAfterMs).toBe(5 * 86_400_000)
    expect(resolveServeConfig({}, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhookAllowPrivateUrls).toBe(true)
  })

  it.each([
    [{ webhookRetrySchedule: '' }],
    [{ webhookRetrySchedule: '5s,,5m' }],
    [{ webhookAllowPrivateUrls: 'maybe' }],
    [{ webhookTimeout: '0ms' }],
    [{ webhookPollInterval: 'often' }],
  ])('refuses %o', (flags) => {
    expect(() => resolveServeConfig(flags, {})).toThrow(ConfigError)
  })

  it('says a poll interval must be above zero when given none', () => {
    expect(() => resolveServeConfig({ webhookPollInterval: '0ms' }, {})).toThrow(/above zero/)
  })

  it('takes a retry schedule of 1 to 20 delays', () => {
    const delays = (n: number) => Array.from({ length: n }, () => '1s').join(',')
    expect(resolveServeConfig({ webhookRetrySchedule: delays(1) }, {}).webhookRetryScheduleMs).toHaveLength(1)
    expect(resolveServeConfig({ webhookRetrySchedule: delays(20) }, {}).webhookRetryScheduleMs).toHaveLength(
      20,
    )
    expect(() => resolveServeConfig({ webhookRetrySchedule: delays(21) }, {})).toThrow(ConfigError)
  })

  it('spreads each retry delay by at most 20% and stops after the schedule', () => {
    const schedule = parseRetrySchedule('10s,1m') as number[]
    expect(nextAttemptDelay(schedule, 1, () => 0)).toBe(8000)
    expect(nextAttemptDelay(schedule, 1, () => 1)).toBe(12_000)
    expect(nextAttemptDelay(schedule, 2, () => 0.5)).toBe(60_000)
    expect(nextAttemptDelay(schedule, 3)).toBeNull()
  })
})
