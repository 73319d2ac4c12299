import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type AppOptions, buildApp } from '../../src/app.js'
import { ALONE_AFTER_MS, SETTLE_INTERVAL_MS } from '../../src/limits/shared-counts.js'
import { createLogger } from '../../src/log.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { TokenService } from '../../src/tokens/service.js'
import { captureLines } from '../helpers/log.js'
import { admin } from '../helpers/postgres.js'
import { postgresKind, type StoreKind, storeKinds } from '../helpers/stores.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

interface Instance {
  app: FastifyInstance
  store: Store
  tokens: TokenService
  /** Settlements this instance made with the database so far. */
  settlements: number
  /** Of those, the ones the database answered. */
  settled: number
  /** Each settlement: when it was sent and ended (performance.now()), and whether it succeeded. */
  log: Array<{ began: number; ended?: number; ok: boolean }>
}

/**
 * Whether the instance may have counted alone at some moment from `from` to `to`: its last settlement
 * before had failed, or one failed or was in flight past ALONE_AFTER_MS meanwhile (less a margin, for
 * its clock read a moment apart from the service's own).
 */
function mayHaveCountedAlone({ log }: Instance, from: number, to: number): boolean {
  const bound = ALONE_AFTER_MS - 100
  const before = log.filter((r) => r.ended !== undefined && r.ended <= from).at(-1)
  if (before && !before.ok) return true
  return log.some(
    (r) =>
      r.began < to &&
      (r.ended === undefined || r.ended > from) &&
      ((r.ended !== undefined && !r.ok) || Math.min(r.ended ?? to, to) - r.began > bound),
  )
}

const opened: Instance[] = []
const proxies: TcpProxy[] = []
afterEach(async () => {
  await Promise.all(
    opened.splice(0).map(async ({ app, store }) => {
      await app.close()
      await store.close().catch(() => {})
    }),
  )
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

/** One instance of the service on the database at `url`, as `serve` builds it. */
async function instance(url: string, options: Partial<AppOptions>): Promise<Instance> {
  const location = parseDatabaseUrl(url)
  if (!location) throw new Error(`bad test database url ${url}`)
  const store = await openStore(location)
  const counted: Instance = {
    app: undefined as unknown as FastifyInstance,
    store,
    tokens: undefined as never,
    settlements: 0,
    settled: 0,
    log: [],
  }
  const shared = store.rateLimits
  if (shared) {
    const settle = shared.settle.bind(shared)
    shared.settle = (changes) => {
      counted.settlements += 1
      const record: Instance['log'][number] = { began: performance.now(), ok: false }
      counted.log.push(record)
      return settle(changes).then(
        (settlement) => {
          counted.settled += 1
          record.ended = performance.now()
          record.ok = true
          return settlement
        },
        (error) => {
          record.ended = performance.now()
          throw error
        },
      )
    }
  }
  counted.tokens = new TokenService(store.tokens)
  counted.app = await buildApp({ store, tokens: counted.tokens, ...options })
  await counted.app.ready()
  opened.push(counted)
  return counted
}

/** The database's clock less this process's wall clock, in milliseconds. */
async function databaseClockOffset(url: string): Promise<number> {
  return admin(url, async (client) => {
    const before = Date.now()
    const result = await client.query<{ now: string }>(
      'SELECT extract(epoch FROM clock_timestamp()) * 1000 AS now',
    )
    return Number(result.rows[0]?.now) - (before + Date.now()) / 2
  })
}

/**
 * Waits for the start of the next window of `windowMs` (windows are aligned on the database's clock),
 * and a little more, since the instances' clocks agree with it only to within a round trip. Returns
 * the time left in that window, by this process's clock.
 */
async function nextWindow(url: string, windowMs: number): Promise<{ ends: number }> {
  const offset = await databaseClockOffset(url)
  const now = Date.now() + offset
  const start = (Math.floor(now / windowMs) + 1) * windowMs
  await sleep(start + 50 - now)
  return { ends: start - offset + windowMs }
}

/** Waits, if the current window of `windowMs` ends within ten seconds, for the next one to start. */
async function farFromWindowEnd(url: string, windowMs: number): Promise<void> {
  const now = Date.now() + (await databaseClockOffset(url))
  const left = windowMs - (now % windowMs)
  if (left < 10_000) await sleep(left + 50)
}

/**
 * Sends `count` requests evenly spread over the next whole window, one after the other, each by
 * `send`; their answers.
 */
async function throughOneWindow<T>(
  url: string,
  windowMs: number,
  count: number,
  send: (i: number) => Promise<T>,
): Promise<T[]> {
  const { ends } = await nextWindow(url, windowMs)
  const from = Date.now()
  const span = ends - 100 - from
  const answers = []
  for (let i = 0; i < count; i++) {
    const due = from + (span * i) / count - Date.now()
    if (due > 0) await sleep(due)
    answers.push(await send(i))
  }
  // All of them within the one window.
  expect(Date.now()).toBeLessThan(ends - 50)
  return answers
}

const admitted = (answers: Array<{ status: number }>) => answers.filter((a) => a.status !== 429).length

describe.skipIf(!postgresKind)('rate limits shared by instances on PostgreSQL', () => {
  // A window long enough that its requests, one after the other, fit in it on a loaded machine.
  const limit = { max: 100, windowMs: 5000 }

  async function two(options: Partial<AppOptions> = { rateLimit: limit }, given?: string) {
    const url = given ?? (await (postgresKind as StoreKind).freshUrl())
    const a = await instance(url, options)
    const b = await instance(url, options)
    const token = (await a.tokens.create('shared', ['plants:read'])).token
    const get = async (which: Instance) =>
      (await which.app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${token}` } })).statusCode
    // Each has verified the token (and counted it, in a window before the test's).
    expect([await get(a), await get(b)]).toEqual([404, 404])
    return { url, a, b, get }
  }

  it('admits a token’s limit once across two instances sent to in turn, within 10 %', async () => {
    const { url, a, b, get } = await two()
    const instances = [a, b]
    // Three times the limit, alternating: per instance counting would admit all 200 of its limit.
    const answers = await throughOneWindow(url, limit.windowMs, 3 * limit.max, async (i) => ({
      instance: i % 2,
      status: await get(instances[i % 2] as Instance),
    }))
    const statuses = new Set(answers.map((a) => a.status))
    expect([...statuses].sort()).toEqual([404, 429])
    const total = admitted(answers)
    process.stdout.write(`  alternating: ${total} of ${answers.length} admitted (limit ${limit.max})\n`)
    expect(total).toBeGreaterThanOrEqual(0.9 * limit.max)
    expect(total).toBeLessThanOrEqual(1.1 * limit.max)
    // Both instances admitted some: the allowance went where the requests did.
    for (const which of [0, 1])
      expect(admitted(answers.filter((a) => a.instance === which))).toBeGreaterThan(0)
  })

  it('holds a token’s own limit across two instances, with no service-wide limit, within 10 %', async () => {
    const url = await (postgresKind as StoreKind).freshUrl()
    const instances = [await instance(url, {}), await instance(url, {})] as const
    const token = (await instances[0].tokens.create('own', ['plants:read'], undefined, limit)).token
    const get = async (which: Instance) =>
      (await which.app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${token}` } })).statusCode
    expect([await get(instances[0]), await get(instances[1])]).toEqual([404, 404])
    const answers = await throughOneWindow(url, limit.windowMs, 3 * limit.max, async (i) => ({
      instance: i % 2,
      status: await get(instances[i % 2] as Instance),
    }))
    const total = admitted(answers)
    process.stdout.write(
      `  own limit, alternating: ${total} of ${answers.length} admitted (limit ${limit.max})\n`,
    )
    expect(total).toBeGreaterThanOrEqual(0.9 * limit.max)
    expect(total).toBeLessThanOrEqual(1.1 * limit.max)
  })

  it('admits a token’s limit across two instances when every request goes to one, within 10 %', async () => {
    const { url, a, get } = await two()
    const answers = await throughOneWindow(url, limit.windowMs, 3 * limit.max, async () => ({
      instance: 0,
      status: await get(a),
    }))
    const total = admitted(answers)
    process.stdout.write(`  all to one: ${total} of ${answers.length} admitted (limit ${limit.max})\n`)
    expect(total).toBeGreaterThanOrEqual(0.9 * limit.max)
    expect(total).toBeLessThanOrEqual(1.1 * limit.max)
  })

  it.each([
    ['stays', false],
    ['stops', true],
  ])('follows the requests from one instance to the other when the first %s', async (_, stops) => {
    const { url, a, b, get } = await two()
    // Well within the limit on the first, which then holds some in reserve; the limit is reached on
    // the second.
    const answers = await throughOneWindow(url, limit.windowMs, 1.5 * limit.max, async (i) => {
      if (i === 60 && stops) await a.app.close()
      return { instance: i < 60 ? 0 : 1, status: await get(i < 60 ? a : b) }
    })
    const total = admitted(answers)
    process.stdout.write(
      `  moving, the first ${stops ? 'stopping' : 'staying'}: ${total} of ${answers.length} admitted (limit ${limit.max})\n`,
    )
    expect(admitted(answers.slice(0, 60))).toBe(60)
    expect(total).toBeGreaterThanOrEqual(0.9 * limit.max)
    expect(total).toBeLessThanOrEqual(1.1 * limit.max)
  })

  it('admits a burst sent to both at once at most 10 % over the limit, and not refused below it', async () => {
    const { url, a, b, get } = await two()
    await nextWindow(url, limit.windowMs)
    // Everything at once, half to each: more than either could admit of what it reserved.
    const statuses = await Promise.all(
      Array.from({ length: 3 * limit.max }, (_, i) => get(i % 2 === 0 ? a : b)),
    )
    const total = statuses.filter((status) => status !== 429).length
    process.stdout.write(`  burst: ${total} of ${statuses.length} admitted (limit ${limit.max})\n`)
    expect(total).toBeGreaterThanOrEqual(0.9 * limit.max)
    expect(total).toBeLessThanOrEqual(1.1 * limit.max)
  })

  it('moves no window when the host’s wall clock steps back', async () => {
    const url = await (postgresKind as StoreKind).freshUrl()
    await farFromWindowEnd(url, 3_600_000)
    // One instance, so that it alone holds the window's allowance once it has settled: which of two
    // settles first would decide whether the other may still reserve any.
    const a = await instance(url, { rateLimit: { max: 3, windowMs: 3_600_000 } })
    const token = (await a.tokens.create('alone', ['plants:read'])).token
    const get = async () =>
      (await a.app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${token}` } })).statusCode
    expect(await get()).toBe(404)
    await sleep(2 * SETTLE_INTERVAL_MS)
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    try {
      expect(await get()).toBe(404)
      // An NTP step or a resumed VM puts the clock back an hour.
      vi.setSystemTime(start - 3_600_000)
      await sleep(2 * SETTLE_INTERVAL_MS)
      // The third of three is admitted in the window that stays; a fourth would be the first of a
      // window the step made.
      expect(await get()).toBe(404)
      expect(await get()).toBe(429)
    } finally {
      vi.useRealTimers()
    }
  })

  it('costs no database write per request: one settlement per instance and interval at most', async () => {
    const { a, b, get } = await two({ rateLimit: { max: 1_000_000, windowMs: 60_000 } })
    const started = performance.now()
    let requests = 0
    while (performance.now() - started < 1000) {
      await Promise.all([get(a), get(b), get(a), get(b)])
      requests += 4
    }
    const elapsed = performance.now() - started
    const settlements = a.settlements + b.settlements
    process.stdout.write(`  ${requests} requests, ${settlements} settlements in ${Math.round(elapsed)} ms\n`)
    // Nothing waits under so large a limit, so only the interval's settlements are made.
    expect(settlements).toBeLessThanOrEqual(2 * (Math.ceil(elapsed / SETTLE_INTERVAL_MS) + 1))
    expect(requests).toBeGreaterThan(10 * settlements)
  })

  it('counts alone while the database is unreachable, answering 401 or 429 and never a 5xx', async () => {
    const base = await (postgresKind as StoreKind).freshUrl()
    await farFromWindowEnd(base, 3_600_000)
    const proxy = await TcpProxy.start(base)
    proxies.push(proxy)
    const url = proxy.route(base)
    const options = { unauthenticatedRateLimit: { max: 20, windowMs: 3_600_000 } }
    const { lines, stream } = captureLines()
    const a = await instance(url, { ...options, logger: createLogger('info', stream) })
    const b = await instance(url, options)
    const anonymous = async (to = a) => (await to.app.inject({ url: '/plants/1' })).statusCode
    const told = (message: string) => lines.filter((line) => JSON.parse(line).msg === message).length
    const before = []
    for (let i = 0; i < 10; i++) before.push(await anonymous())
    expect(before).toEqual(Array(10).fill(401))
    await sleep(2 * SETTLE_INTERVAL_MS)
    await proxy.down()
    const during = []
    for (let i = 0; i < 30; i++) {
      during.push(await anonymous())
      await sleep(10)
    }
    expect(during.every((status) => status === 401 || status === 429)).toBe(true)
    // The address's own count goes on: up to the limit in all, then refused.
    expect(during.filter((status) => status === 401).length).toBe(10)
    expect(during.slice(-5)).toEqual(Array(5).fill(429))
    expect(told('rate limits counted by this process alone: cannot settle them with the database')).toBe(1)

    // Back: what it admitted alone is settled, and the other instance sees the address's window spent
    // (but for the one request a process admits before its first settlement of a window).
    await proxy.up()
    await vi.waitFor(() => expect(told('rate limits settled with the database again')).toBe(1), {
      timeout: 5000,
    })
    // The other instance's pool lost its connections too, and one it still holds may fail its next
    // settlement, which leaves it counting alone until one succeeds. Asked for another address, it
    // settles; the address under test is asked once it has settled with the database.
    await vi.waitFor(async () => expect((await b.app.inject({ url: '/readyz' })).statusCode).toBe(200), {
      timeout: 5000,
    })
    const settledBefore = b.settled
    await b.app.inject({ url: '/plants/1', remoteAddress: '127.0.0.2' })
    await vi.waitFor(() => expect(b.settled).toBeGreaterThan(settledBefore), { timeout: 5000 })
    // By design it counts alone again whenever a settlement fails or takes longer than ALONE_AFTER_MS
    // (a busy database), admitting up to the limit itself. A round asked while that may have been so
    // proves nothing, and is asked again: at most twice more, so that what it admits alone (5 a round)
    // stays well below the limit, and a refusal still comes from the window the others spent.
    let after: number[] = []
    for (let round = 0; round < 3; round++) {
      const from = performance.now()
      after = []
      for (let i = 0; i < 5; i++) after.push(await anonymous(b))
      const to = performance.now()
      await vi.waitFor(() => expect(b.log.every((r) => r.ended !== undefined || r.began >= to)).toBe(true), {
        timeout: 10_000,
      })
      if (!mayHaveCountedAlone(b, from, to)) break
      after = []
    }
    expect(after).toHaveLength(5)
    expect(after.filter((status) => status === 401).length).toBeLessThanOrEqual(1)
    expect(after.slice(-3)).toEqual(Array(3).fill(429))
  })
})

describe.each(storeKinds)('a 304 does not count against the limit ($name)', (kind) => {
  it('gives back the count of a conditional GET answered 304', async () => {
    const url = await kind.freshUrl()
    // A window far longer than the test, so that it does not end midway on the aligned clock.
    if (kind.name === 'postgres') await farFromWindowEnd(url, 3_600_000)
    const t = await instance(url, { rateLimit: { max: 3, windowMs: 3_600_000 } })
    await t.store.plants.create({ id: 1n, name: 'fern' })
    const token = (await t.tokens.create('reader', ['plants:read'])).token
    const get = (headers: Record<string, string> = {}) =>
      t.app.inject({ url: '/plants/1', headers: { authorization: `Bearer ${token}`, ...headers } })
    const first = await get()
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-remaining']).toBe('2')
    const etag = String(first.headers.etag)
    for (let i = 0; i < 10; i++) {
      const unchanged = await get({ 'if-none-match': etag })
      expect(unchanged.statusCode).toBe(304)
      // What the answer says is left does not count it either.
      expect(unchanged.headers['ratelimit-remaining']).toBe('2')
    }
    expect((await get()).statusCode).toBe(200)
    expect((await get()).statusCode).toBe(200)
    const limited = await get()
    expect(limited.statusCode).toBe(429)
    // Once the allowance is spent, a conditional GET is refused like any other request.
    expect((await get({ 'if-none-match': etag })).statusCode).toBe(429)
  })
})
