import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { errors } from '../../src/errors.js'
import { createMetrics, type Metrics } from '../../src/metrics/registry.js'
import { timeStore } from '../../src/metrics/store-timing.js'
import { plantEvent } from '../../src/plants/events.js'
import type { Store } from '../../src/store/types.js'
import { TokenService } from '../../src/tokens/service.js'
import { errorOf, postPlant } from '../helpers/app.js'
import { type ContractWatch, watchContract } from '../helpers/contract.js'
import { issueToken, startServer } from '../helpers/process.js'
import { openFresh, storeKinds, tempDir } from '../helpers/stores.js'
import { insertUnfannedEvent, subscriptionRecord } from '../helpers/webhooks.js'

describe.each(storeKinds)('GET /metrics on $name', (kind) => {
  let app: Awaited<ReturnType<typeof buildApp>>
  let store: Store
  let metrics: Metrics
  /** The store itself, not timed, for what a test writes past the API. */
  let raw: Store
  let tokens: TokenService
  let reader: string
  let writer: string
  let contract: ContractWatch

  beforeAll(async () => {
    metrics = createMetrics({ processMetrics: true })
    raw = (await openFresh(kind)).store
    store = timeStore(raw, metrics)
    tokens = new TokenService(store.tokens, {
      onVerify: (cache) => metrics.tokenVerifications.inc({ cache }),
    })
    app = await buildApp({ store, tokens, metrics })
    await app.ready()
    contract = watchContract(app)
    reader = (await tokens.create('prometheus', ['metrics:read'])).token
    writer = (await tokens.create('writer', ['plants:read', 'plants:write'])).token
  })
  afterAll(async () => {
    contract.done()
    await app.close()
    await store.close()
  })

  const scrape = async () => {
    const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${reader}` } })
    expect(res.statusCode).toBe(200)
    return res
  }
  const seriesCount = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length

  it('needs a token, and one with the metrics:read scope', async () => {
    const anonymous = await app.inject({ url: '/metrics' })
    expect(anonymous.statusCode).toBe(401)
    expect(errorOf(anonymous).error).toBe(errors.TOKEN_MISSING.code)
    const wrongScope = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${writer}` } })
    expect(wrongScope.statusCode).toBe(403)
    expect(errorOf(wrongScope).error).toBe(errors.SCOPE_MISSING.code)
  })

  it('answers in the Prometheus text format with process metrics', async () => {
    const res = await scrape()
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(res.body).toMatch(/^plantstore_process_resident_memory_bytes \d+/m)
  })

  it('counts requests by route template and status, not by URL', async () => {
    await postPlant(app, writer, '{"id": 77, "name": "a"}')
    await app.inject({ url: '/plants/77', headers: { authorization: `Bearer ${writer}` } })
    await app.inject({ url: '/plants/78', headers: { authorization: `Bearer ${writer}` } })
    const body = (await scrape()).body
    expect(body).toContain('plantstore_http_requests_total{method="POST",route="/plants",status="200"} 1')
    expect(body).toContain('plantstore_http_requests_total{method="GET",route="/plants/:id",status="200"} 1')
    expect(body).toContain('plantstore_http_requests_total{method="GET",route="/plants/:id",status="404"} 1')
    expect(body).toMatch(
      /plantstore_http_request_duration_seconds_count\{method="POST",route="\/plants",status="200"\} 1/,
    )
    expect(body).not.toContain('route="/plants/77"')
  })

  it('adds no series for 1,000 requests to random unknown URLs', async () => {
    await app.inject({ url: '/warm-up-unknown' })
    // The requests' series only: the store's background work (a retention sweep, a revocation
    // check) may add its own label sets meanwhile.
    const requestSeries = (text: string) =>
      seriesCount(
        text
          .split('\n')
          .filter((l) => l.startsWith('plantstore_http_'))
          .join('\n'),
      )
    const before = requestSeries((await scrape()).body)
    for (let i = 0; i < 1000; i++) {
      await app.inject({ url: `/x${Math.random().toString(36).slice(2)}/${i}?q=${i}` })
    }
    const after = (await scrape()).body
    // The scrape itself may add its own label sets once; random URLs add none.
    expect(requestSeries(after)).toBeLessThanOrEqual(before + 3)
    expect(after).toContain(
      'plantstore_http_requests_total{method="GET",route="unmatched",status="404"} 1001',
    )
  })

  it('counts a URL the router cannot decode as unmatched, like any other path it has no route for', async () => {
    for (const url of ['/abc%zz1', '/plants/%zz', '/webhooks/%zz']) {
      expect((await app.inject({ url })).statusCode).toBe(400)
    }
    const body = (await scrape()).body
    expect(body).toContain('plantstore_http_requests_total{method="GET",route="unmatched",status="400"} 3')
    // Timed as every answer is, not observed as taking no time at all.
    const sum =
      /plantstore_http_request_duration_seconds_sum\{method="GET",route="unmatched",status="400"\} (\S+)/
    expect(Number(sum.exec(body)?.[1])).toBeGreaterThan(0)
  })

  it('counts token verifications as cache hits and misses', async () => {
    const body = (await scrape()).body
    const value = (cache: string) =>
      Number(new RegExp(`plantstore_token_verifications_total\\{cache="${cache}"\\} (\\d+)`).exec(body)?.[1])
    expect(value('miss')).toBeGreaterThanOrEqual(2)
    expect(value('hit')).toBeGreaterThan(value('miss'))
  })

  it('counts one miss for a request whose token is read from the store, one hit once it is cached', async () => {
    const value = async (cache: string) =>
      Number(
        new RegExp(`plantstore_token_verifications_total\\{cache="${cache}"\\} (\\d+)`).exec(
          (await scrape()).body,
        )?.[1],
      )
    const fresh = (await tokens.create('fresh', ['metrics:read'])).token
    const read = () => app.inject({ url: '/metrics', headers: { authorization: `Bearer ${fresh}` } })
    const [miss, hit] = [await value('miss'), await value('hit')]
    await read()
    // Each scrape's own token is a hit too.
    expect([await value('miss'), await value('hit')]).toEqual([miss + 1, hit + 2])
    await read()
    expect([await value('miss'), await value('hit')]).toEqual([miss + 1, hit + 5])
  })

  it('times database operations by operation', async () => {
    const body = (await scrape()).body
    expect(body).toMatch(
      /plantstore_db_operation_duration_seconds_count\{operation="plants.create",outcome="ok"\} 1/,
    )
    expect(body).toMatch(
      /plantstore_db_operation_duration_seconds_count\{operation="plants.read",outcome="ok"\} 2/,
    )
    expect(body).toMatch(
      /plantstore_db_operation_duration_seconds_count\{operation="tokens.find",outcome="ok"\} \d+/,
    )
  })

  it('shows no operation for a synchronous store helper, which is no database call', async () => {
    const body = (await scrape()).body
    // Every request with a token reads the revocation epoch, in memory.
    expect(body).not.toContain('operation="tokens.revocationEpoch"')
    expect(body).toMatch(/operation="tokens.find",outcome="error"\} 0/)
  })

  it('reports the webhook queue: events awaiting fan-out and deliveries by status', async () => {
    const gauge = (body: string, series: string) => {
      const line = body.split('\n').find((l) => l.startsWith(`${series} `))
      return Number(line?.split(' ')[1])
    }
    const before = (await scrape()).body
    const awaiting = gauge(before, 'plantstore_webhook_events_awaiting_fan_out')
    expect(gauge(before, 'plantstore_webhook_deliveries{status="pending"}')).toBe(0)
    const created = new Date(Date.now() - 60_000)
    await store.webhooks.insert(subscriptionRecord('wh_metrics00000000000000000', created))
    expect((await postPlant(app, writer, '{"id": 4242, "name": "queued"}')).statusCode).toBe(200)
    // Each store fans a create out in its own transaction: its delivery is queued at once.
    const queued = (await scrape()).body
    expect(gauge(queued, 'plantstore_webhook_events_awaiting_fan_out')).toBe(awaiting)
    expect(gauge(queued, 'plantstore_webhook_deliveries{status="pending"}')).toBe(1)
    // An event that no transaction fanned out (an earlier version's) waits for the dispatcher.
    const plant = { id: 4243n, name: 'left over' }
    await insertUnfannedEvent(raw, plantEvent('plant.created', plant, new Date()))
    expect(gauge((await scrape()).body, 'plantstore_webhook_events_awaiting_fan_out')).toBe(awaiting + 1)
    await store.webhooks.fanOut(100, new Date())
    const fanned = (await scrape()).body
    expect(gauge(fanned, 'plantstore_webhook_events_awaiting_fan_out')).toBe(0)
    expect(gauge(fanned, 'plantstore_webhook_deliveries{status="pending"}')).toBe(2)
    expect(gauge(fanned, 'plantstore_webhook_deliveries{status="failed"}')).toBe(0)
  })
})

describe('a fresh serve process', () => {
  it('shows every rate-limit and retention series at 0 from the start, before anything is counted', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const token = await issueToken(url, 'prometheus', 'metrics:read')
    const server = await startServer(['--database-url', url])
    try {
      const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      const body = await res.text()
      for (const key of ['token', 'address']) {
        expect(body).toMatch(new RegExp(`^plantstore_rate_limited_total\\{key="${key}"\\} 0$`, 'm'))
      }
      for (const kind of ['webhook_deliveries', 'events', 'tokens', 'idempotency_keys']) {
        expect(body).toMatch(new RegExp(`^plantstore_retention_deleted_total\\{kind="${kind}"\\} 0$`, 'm'))
      }
    } finally {
      await server.stop()
    }
  })
})
