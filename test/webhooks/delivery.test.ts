import { once } from 'node:events'
import http from 'node:http'
import { type AddressInfo, createServer } from 'node:net'
import { PassThrough } from 'node:stream'
import { Webhook } from 'standardwebhooks'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createLogger } from '../../src/log.js'
import { changePlant, createPlant, deletePlant } from '../../src/plants/service.js'
import type { Store, WebhookStore } from '../../src/store/types.js'
import { DISPATCH_LEASE } from '../../src/webhooks/dispatch-lease.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { createWebhook, getWebhook, rotateSecret } from '../../src/webhooks/service.js'
import type { Resolver } from '../../src/webhooks/url-safety.js'
import { startRawReceiver } from '../helpers/raw-receiver.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

const ALL = ['plant.created', 'plant.updated', 'plant.deleted'] as const

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe.each(storeKinds)('webhook delivery on $name', (kind) => {
  let store: Store
  let receiver: Receiver
  let dispatchers: Dispatcher[]

  beforeEach(async () => {
    store = (await openFresh(kind)).store
    receiver = await startReceiver()
    dispatchers = []
  })
  afterEach(async () => {
    for (const d of dispatchers) await d.stop(0)
    await receiver.close()
    await store.close()
  })

  function dispatcher(
    options: {
      retrySchedule?: number[]
      timeoutMs?: number
      disableAfterMs?: number
      allowPrivateUrls?: boolean
      resolve?: Resolver
      /** Take part in the dispatcher lease, with this length. */
      leaseTtlMs?: number
      webhooks?: WebhookStore
      now?: () => number
      concurrency?: number
      logger?: ReturnType<typeof createLogger>
      onDisabled?: (webhookId: string) => void
    } = {},
  ): Dispatcher {
    const timeoutMs = options.timeoutMs ?? 5000
    const d = new Dispatcher({
      store: options.webhooks ?? store.webhooks,
      sender: new WebhookSender({
        timeoutMs,
        allowPrivateUrls: options.allowPrivateUrls ?? true,
        resolve: options.resolve,
      }),
      logger: options.logger ?? createLogger('silent'),
      retrySchedule: options.retrySchedule ?? [10, 10],
      timeoutMs,
      disableAfterMs: options.disableAfterMs ?? 5 * 86_400_000,
      pollIntervalMs: 10,
      lease: options.leaseTtlMs ? { store: store.leases, ttlMs: options.leaseTtlMs } : undefined,
      now: options.now,
      concurrency: options.concurrency,
      onDisabled: options.onDisabled,
    })
    dispatchers.push(d)
    d.start()
    return d
  }

  it('passes on new events at once after the wall clock steps back', async () => {
    await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    const d = new Dispatcher({
      store: store.webhooks,
      sender: new WebhookSender({ timeoutMs: 5000, allowPrivateUrls: true }),
      logger: createLogger('silent'),
      retrySchedule: [10],
      timeoutMs: 5000,
      disableAfterMs: 86_400_000,
      // No polls to fall back on: only the news of events written makes a pass.
      pollIntervalMs: 3_600_000,
    })
    dispatchers.push(d)
    try {
      d.start()
      await createPlant(store.plants, { id: 1n, name: 'before the step' })
      d.eventsWritten()
      await receiver.waitFor(1)
      // An NTP step or a resumed VM: the clock goes back an hour.
      vi.setSystemTime(start - 3_600_000)
      await createPlant(store.plants, { id: 2n, name: 'after the step' })
      d.eventsWritten()
      await receiver.waitFor(2, 5000)
    } finally {
      vi.useRealTimers()
    }
  })

  it('delivers a new plant signed per Standard Webhooks, verifiable with the standardwebhooks library', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    await createPlant(store.plants, { id: 9223372036854775807n, name: 'Monstera', tag: 'aroid' })
    dispatcher()
    const [request] = await receiver.waitFor(1)
    const headers = request?.headers as Record<string, string>
    expect(headers['content-type']).toBe('application/json')
    expect(headers['webhook-id']).toMatch(/^msg_/)
    const verified = new Webhook(hook.secret).verify(request?.body ?? '', headers) as Record<string, unknown>
    expect(verified.type).toBe('plant.created')
    // The id is exact in the body text, past what a JS number can hold.
    expect(request?.body).toContain('"data":{"id":9223372036854775807,"name":"Monstera","tag":"aroid"}')
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request?.body ?? '', headers),
    ).toThrow()
    const [delivery] = await until(async () => {
      const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
      return rows[0]?.status === 'succeeded' ? rows : undefined
    })
    expect(delivery).toMatchObject({ attempts: 1, lastStatusCode: 200, eventId: headers['webhook-id'] })
  })

  it('sends only the subscribed event types, and nothing from before the subscription', async () => {
    await createPlant(store.plants, { id: 1n, name: 'before' })
    const wanted = await startReceiver()
    try {
      await createWebhook(store.webhooks, { url: receiver.url, events: ['plant.deleted'], description: null })
      await createWebhook(store.webhooks, { url: wanted.url, events: ['plant.created'], description: null })
      await createPlant(store.plants, { id: 2n, name: 'after' })
      dispatcher()
      const [request] = await wanted.waitFor(1)
      expect(JSON.parse(request?.body ?? '{}').data.id).toBe(2)
      await until(async () => (await store.events.listSince(0, 10)).length === 2 || undefined)
      expect(receiver.received).toHaveLength(0)
      expect(wanted.received).toHaveLength(1)
    } finally {
      await wanted.close()
    }
  })

  it('delivers updates and deletes to their subscribers through the same outbox', async () => {
    await createWebhook(store.webhooks, {
      url: receiver.url,
      events: ['plant.updated', 'plant.deleted'],
      description: null,
    })
    await createPlant(store.plants, { id: 42n, name: 'Fern' })
    await changePlant(store.plants, 42n, { tag: 'shade' }, undefined)
    await deletePlant(store.plants, 42n, undefined)
    dispatcher()
    const requests = await receiver.waitFor(2)
    const bodies = requests.map((r) => JSON.parse(r.body)).sort((a, b) => a.type.localeCompare(b.type))
    expect(bodies).toMatchObject([
      { type: 'plant.deleted', data: { id: 42, name: 'Fern', tag: 'shade' } },
      { type: 'plant.updated', data: { id: 42, name: 'Fern', tag: 'shade' } },
    ])
  })

  it('signs with both secrets for a day after a rotation', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    const rotated = await rotateSecret(store.webhooks, hook.id)
    await createPlant(store.plants, { id: 3n, name: 'rotated' })
    dispatcher()
    const [request] = await receiver.waitFor(1)
    const headers = request?.headers as Record<string, string>
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2)
    expect(new Webhook(rotated.secret).verify(request?.body ?? '', headers)).toBeTruthy()
    expect(new Webhook(hook.secret).verify(request?.body ?? '', headers)).toBeTruthy()
  })

  it('retries a failing receiver per the schedule, with the same webhook-id, until it succeeds', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith(503)
    await createPlant(store.plants, { id: 4n, name: 'retry' })
    dispatcher({ retrySchedule: [10, 10, 10] })
    await receiver.waitFor(2)
    receiver.respondWith(200)
    const all = await receiver.waitFor(3)
    expect(new Set(all.map((r) => r.headers['webhook-id'])).size).toBe(1)
    const [delivery] = await until(async () => {
      const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
      return rows[0]?.status === 'succeeded' ? rows : undefined
    })
    expect(delivery?.attempts).toBeGreaterThanOrEqual(3)
    expect((await getWebhook(store.webhooks, hook.id)).failingSince).toBeNull()
  })

  it('waits each delay of the schedule in its turn, each spread by ±20%', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith(503)
    for (let id = 1n; id <= 8n; id++) await createPlant(store.plants, { id, name: `p${id}` })
    // The first retry comes at once; the second waits out the schedule's second delay.
    dispatcher({ retrySchedule: [10, 600_000] })
    const waitOf = (d: { nextAttemptAt: Date | null; lastAttemptAt: Date | null }) =>
      (d.nextAttemptAt?.getTime() ?? Number.NaN) - (d.lastAttemptAt?.getTime() ?? Number.NaN)
    await receiver.waitFor(16)
    // While an attempt is out its next attempt is its lease (seconds); then the answer is recorded.
    const deliveries = await until(async () => {
      const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
      const recorded = rows.every((r) => r.attempts === 2 && waitOf(r) > 60_000)
      return rows.length === 8 && recorded ? rows : undefined
    })
    const waits = deliveries.map(waitOf)
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(480_000)
      expect(wait).toBeLessThanOrEqual(720_000)
    }
    expect(new Set(waits).size).toBeGreaterThan(1)
    expect(deliveries.every((d) => d.status === 'pending')).toBe(true)
  })

  it('marks a delivery failed and keeps it once the schedule is spent; timeouts count as failures', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith('hang')
    await createPlant(store.plants, { id: 5n, name: 'doomed' })
    dispatcher({ retrySchedule: [10], timeoutMs: 200 })
    const [delivery] = await until(async () => {
      const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
      return rows[0]?.status === 'failed' ? rows : undefined
    })
    expect(delivery).toMatchObject({ attempts: 2, lastStatusCode: null, nextAttemptAt: null })
    expect(delivery?.lastError).toMatch(/timed out/)
    expect((await getWebhook(store.webhooks, hook.id)).failingSince).not.toBeNull()
  })

  it('takes a 2xx whose status came in time as the answer, though its body is still arriving', async () => {
    const trickling = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      const drip = setInterval(() => response.write('.'), 50)
      response.on('close', () => clearInterval(drip))
    })
    trickling.listen(0, '127.0.0.1')
    await once(trickling, 'listening')
    try {
      const { port } = trickling.address() as AddressInfo
      const hook = await createWebhook(store.webhooks, {
        url: `http://127.0.0.1:${port}/hook`,
        events: [...ALL],
        description: null,
      })
      await createPlant(store.plants, { id: 8n, name: 'slow body' })
      dispatcher({ retrySchedule: [], timeoutMs: 300 })
      const [delivery] = await until(async () => {
        const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
        return rows[0]?.status !== 'pending' && rows[0] ? rows : undefined
      }, 5000)
      expect(delivery).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 200,
        lastError: null,
      })
    } finally {
      trickling.closeAllConnections()
      trickling.close()
    }
  })

  it('disables a subscription that keeps failing past the disable-after time, and says why', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith(500)
    await createPlant(store.plants, { id: 6n, name: 'x' })
    const lines: string[] = []
    const out = new PassThrough()
    out.on('data', (line: Buffer) => lines.push(line.toString()))
    const told: string[] = []
    dispatcher({
      retrySchedule: [10, 10, 10, 10],
      disableAfterMs: 0,
      logger: createLogger('warn', out),
      onDisabled: (webhookId) => told.push(webhookId),
    })
    const disabled = await until(async () => {
      const w = await getWebhook(store.webhooks, hook.id)
      return w.disabledAt ? w : undefined
    })
    expect(disabled.disabledReason).toBe('failing')
    // Said once, in the log and to whoever counts it (the metric of subscriptions disabled).
    await until(() => (told.length > 0 ? told : undefined))
    expect(told).toEqual([hook.id])
    const warnings = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(warnings).toContainEqual(
      expect.objectContaining({
        level: 40,
        webhookId: hook.id,
        msg: 'webhook disabled: its attempts have failed for too long',
      }),
    )
  })

  it('starts a new failing spell after a quiet one, rather than disabling at its first failure', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith(500)
    let skew = 0
    dispatcher({ retrySchedule: [10], timeoutMs: 200, disableAfterMs: 60_000, now: () => Date.now() + skew })
    await createPlant(store.plants, { id: 7n, name: 'before the quiet spell' })
    const failedAt = await until(async () => {
      const [row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
      return row?.status === 'failed' ? row.lastAttemptAt : undefined
    })
    // Nothing to send for longer than the disable-after time: nothing was tried, so nothing failed.
    skew = 120_000
    await createPlant(store.plants, { id: 8n, name: 'after the quiet spell' })
    await receiver.waitFor(3)
    const w = await until(async () => {
      const found = await getWebhook(store.webhooks, hook.id)
      return (found.failingSince?.getTime() ?? 0) > (failedAt?.getTime() ?? 0) || found.disabledAt
        ? found
        : undefined
    })
    expect(w.disabledAt).toBeNull()
    expect(w.failingSince?.getTime()).toBeGreaterThanOrEqual(Date.now() + 100_000)
  })

  it('keeps delivering to others while one receiver hangs', async () => {
    const slow = await startReceiver()
    try {
      slow.respondWith('hang')
      await createWebhook(store.webhooks, { url: slow.url, events: [...ALL], description: null })
      await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
      dispatcher({ timeoutMs: 60_000 })
      for (let i = 0; i < 20; i++) await createPlant(store.plants, { id: BigInt(100 + i), name: `p${i}` })
      await receiver.waitFor(20)
      // The slow receiver is still holding its first requests: it never got an answer in.
      expect(slow.received.length).toBeGreaterThan(0)
      expect(receiver.received).toHaveLength(20)
    } finally {
      await slow.close()
    }
  })

  it('keeps delivering to others while many receivers hang, however many attempts they hold', async () => {
    const hanging = await Promise.all(Array.from({ length: 5 }, () => startReceiver()))
    try {
      for (const slow of hanging) {
        slow.respondWith('hang')
        await createWebhook(store.webhooks, { url: slow.url, events: [...ALL], description: null })
      }
      dispatcher({ timeoutMs: 60_000 })
      for (let i = 0; i < 20; i++) await createPlant(store.plants, { id: BigInt(100 + i), name: `p${i}` })
      // Five subscriptions, each with as many attempts waiting on its receiver as it may have.
      await until(() => hanging.reduce((sum, slow) => sum + slow.received.length, 0) >= 64)
      await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
      for (let i = 0; i < 10; i++) await createPlant(store.plants, { id: BigInt(200 + i), name: `q${i}` })
      // Well within the hanging attempts' timeout: they do not hold up another subscription's.
      await receiver.waitFor(10, 3000)
      expect(receiver.received).toHaveLength(10)
    } finally {
      for (const slow of hanging) await slow.close()
    }
  })

  it('bounds the attempts in flight over all subscriptions, and still delivers to one with none in flight', async () => {
    const hanging = await Promise.all(Array.from({ length: 3 }, () => startReceiver()))
    try {
      for (const slow of hanging) {
        slow.respondWith('hang')
        await createWebhook(store.webhooks, { url: slow.url, events: [...ALL], description: null })
      }
      dispatcher({ timeoutMs: 60_000, concurrency: 8 })
      for (let i = 0; i < 20; i++) await createPlant(store.plants, { id: BigInt(100 + i), name: `p${i}` })
      const held = () => hanging.reduce((sum, slow) => sum + slow.received.length, 0)
      await until(() => held() >= 8)
      await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
      for (let i = 0; i < 10; i++) await createPlant(store.plants, { id: BigInt(200 + i), name: `q${i}` })
      // One at a time, past the cap the hanging receivers filled, well within their timeout.
      await receiver.waitFor(10, 5000)
      expect(receiver.received).toHaveLength(10)
      // 16 each were allowed; the cap held them to 8, plus at most one each begun at the cap.
      expect(held()).toBeLessThanOrEqual(8 + hanging.length)
    } finally {
      for (const slow of hanging) await slow.close()
    }
  })

  it('counts an answer that switches protocols as a failed attempt instead of waiting on it forever', async () => {
    // Node's client drops the connection of a 101 it was not expecting, without an error or an end.
    const switching = createServer((socket) => {
      socket.once('data', () =>
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n'),
      )
      socket.on('error', () => {})
    })
    switching.listen(0, '127.0.0.1')
    await once(switching, 'listening')
    try {
      const { port } = switching.address() as AddressInfo
      const hook = await createWebhook(store.webhooks, {
        url: `http://127.0.0.1:${port}/hook`,
        events: [...ALL],
        description: null,
      })
      await createPlant(store.plants, { id: 9n, name: 'upgraded' })
      dispatcher({ retrySchedule: [], timeoutMs: 500 })
      const [delivery] = await until(async () => {
        const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
        return rows[0]?.status === 'failed' ? rows : undefined
      }, 5000)
      expect(delivery).toMatchObject({ attempts: 1, lastStatusCode: 101 })
    } finally {
      switching.close()
    }
  })

  it('delivers in one attempt though the receiver drops its kept-alive connection as the next attempt reuses it', async () => {
    // No `Keep-Alive: timeout` hint, and the idle connection closed just as the next request arrives
    // on it: the attempt goes out again at once on a new connection, with no failed attempt.
    const raw = await startRawReceiver((connection, request) =>
      connection === 1 && request === 2 ? 'reset' : 'ok',
    )
    try {
      const hook = await createWebhook(store.webhooks, { url: raw.url, events: [...ALL], description: null })
      const d = dispatcher({ retrySchedule: [60_000] })
      const delivered = (count: number) =>
        until(async () => {
          const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
          return rows.length === count && rows.every((row) => row.status === 'succeeded') ? rows : undefined
        }, 5000)
      await createPlant(store.plants, { id: 1n, name: 'first' })
      d.eventsWritten()
      await delivered(1)
      await createPlant(store.plants, { id: 2n, name: 'second' })
      d.eventsWritten()
      const rows = await delivered(2)
      for (const row of rows) expect(row).toMatchObject({ attempts: 1, lastStatusCode: 200, lastError: null })
      expect(raw.answered).toHaveLength(2)
      expect(raw.connections).toBe(2)
    } finally {
      await raw.close()
    }
  })

  it('counts a receiver that resets a new connection as a failed attempt', async () => {
    const raw = await startRawReceiver(() => 'reset')
    try {
      const hook = await createWebhook(store.webhooks, { url: raw.url, events: [...ALL], description: null })
      await createPlant(store.plants, { id: 1n, name: 'refused' })
      dispatcher({ retrySchedule: [] })
      const [delivery] = await until(async () => {
        const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
        return rows[0]?.status === 'failed' ? rows : undefined
      }, 5000)
      expect(delivery).toMatchObject({ attempts: 1, lastStatusCode: null })
      expect(delivery?.lastError).toMatch(/ECONNRESET|socket hang up/)
      expect(raw.connections).toBe(1)
    } finally {
      await raw.close()
    }
  })

  it('refuses to connect when the host resolves to a private address, in any spelling', async () => {
    const resolver: Resolver = async (host) =>
      host === 'rebind.example'
        ? [{ address: '::ffff:127.0.0.1', family: 6 }]
        : [{ address: '127.0.0.1', family: 4 }]
    const hook = await createWebhook(store.webhooks, {
      url: `http://rebind.example:${receiver.port}/hook`,
      events: [...ALL],
      description: null,
    })
    const literal = await createWebhook(store.webhooks, {
      url: `http://127.0.0.1:${receiver.port}/hook`,
      events: [...ALL],
      description: null,
    })
    await createPlant(store.plants, { id: 7n, name: 'ssrf' })
    dispatcher({ allowPrivateUrls: false, resolve: resolver, retrySchedule: [] })
    for (const id of [hook.id, literal.id]) {
      const [delivery] = await until(async () => {
        const rows = await store.webhooks.listDeliveries(id, { limit: 10 })
        return rows[0]?.status === 'failed' ? rows : undefined
      })
      expect(delivery?.lastError).toMatch(/^refused: /)
    }
    expect(receiver.received).toHaveLength(0)
  })

  it('refuses a local name in any spelling at send time, before looking it up', async () => {
    const looked: string[] = []
    const resolver: Resolver = async (host) => {
      looked.push(host)
      return [{ address: '93.184.216.34', family: 4 }]
    }
    const hook = await createWebhook(store.webhooks, {
      url: `http://Api.LocalHost..:${receiver.port}/hook`,
      events: [...ALL],
      description: null,
    })
    await createPlant(store.plants, { id: 8n, name: 'local' })
    dispatcher({ allowPrivateUrls: false, resolve: resolver, retrySchedule: [] })
    const [delivery] = await until(async () => {
      const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
      return rows[0]?.status === 'failed' ? rows : undefined
    })
    expect(delivery?.lastError).toBe('refused: api.localhost is a local name')
    expect(looked).toEqual([])
  })

  it('connects through an injected resolver to an allowed address', async () => {
    const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
    await createWebhook(store.webhooks, {
      url: `http://receiver.example:${receiver.port}/hook`,
      events: [...ALL],
      description: null,
    })
    await createPlant(store.plants, { id: 8n, name: 'resolved' })
    dispatcher({ allowPrivateUrls: true, resolve: resolver })
    const [request] = await receiver.waitFor(1)
    expect(request?.headers.host).toBe(`receiver.example:${receiver.port}`)
  })

  it('hands back leases of attempts still in flight when it stops, so they are sent again', async () => {
    const hook = await createWebhook(store.webhooks, {
      url: receiver.url,
      events: [...ALL],
      description: null,
    })
    receiver.respondWith('hang')
    await createPlant(store.plants, { id: 9n, name: 'interrupted' })
    const first = dispatcher({ timeoutMs: 60_000 })
    await receiver.waitFor(1)
    await first.stop(0)
    const [pending] = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
    expect(pending).toMatchObject({ status: 'pending', attempts: 0 })
    receiver.respondWith(200)
    dispatcher()
    await receiver.waitFor(2)
    expect(receiver.received[1]?.headers['webhook-id']).toBe(receiver.received[0]?.headers['webhook-id'])
  })

  /** The queue, counting the calls that do a dispatcher's work (fanning out and claiming). */
  function counted(): { webhooks: WebhookStore; work: () => number } {
    let calls = 0
    const webhooks = new Proxy(store.webhooks, {
      get(target, property) {
        const value = Reflect.get(target, property, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          if (property === 'fanOut' || property === 'claim') calls++
          return value.apply(target, args)
        }
      },
    })
    return { webhooks, work: () => calls }
  }
  const create = async (ids: number[]) => {
    for (const id of ids) await createPlant(store.plants, { id: BigInt(id), name: `p${id}` })
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it('lets only the holder of the dispatcher lease work; a holder that stops hands over at once', async () => {
    await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
    const a = counted()
    const b = counted()
    // An hour-long lease: the standby can only get it through the holder's release.
    const first = dispatcher({ leaseTtlMs: 3_600_000, webhooks: a.webhooks })
    const second = dispatcher({ leaseTtlMs: 3_600_000, webhooks: b.webhooks })
    await until(() => first.dispatching() || second.dispatching())
    const [holder, standby] = first.dispatching() ? [first, second] : [second, first]
    const [holderQueue, standbyQueue] = first.dispatching() ? [a, b] : [b, a]
    await create([1, 2, 3, 4, 5])
    await receiver.waitFor(5)
    expect(standby.dispatching()).toBe(false)
    expect(standbyQueue.work()).toBe(0)
    expect(holderQueue.work()).toBeGreaterThan(0)

    // Attempts in flight finish first, so none is handed back and sent twice.
    await holder.stop(5000)
    await until(() => standby.dispatching())
    await create([6, 7, 8, 9, 10])
    await receiver.waitFor(10)
    expect(standbyQueue.work()).toBeGreaterThan(0)
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(10)
  })

  it('waits while the lease of a dead holder runs, then takes over', async () => {
    await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
    expect(await store.leases.acquire(DISPATCH_LEASE, 'dead process', new Date(), 60_000)).toBe(true)
    let ahead = 0
    const d = dispatcher({ leaseTtlMs: 3000, now: () => Date.now() + ahead })
    await create([1])
    await sleep(300)
    expect(d.dispatching()).toBe(false)
    expect(receiver.received).toHaveLength(0)
    // The dead holder's lease has run out by this dispatcher's clock.
    ahead = 61_000
    await receiver.waitFor(1)
    expect(d.dispatching()).toBe(true)
  })

  it('stops working once another process has taken its lapsed lease', async () => {
    await createWebhook(store.webhooks, { url: receiver.url, events: [...ALL], description: null })
    const d = dispatcher({ leaseTtlMs: 3000 })
    await until(() => d.dispatching())
    await create([1])
    await receiver.waitFor(1)
    // As if this process had been frozen past its lease and another had taken it meanwhile.
    expect(
      await store.leases.acquire(DISPATCH_LEASE, 'other process', new Date(Date.now() + 10_000), 60_000),
    ).toBe(true)
    await until(() => !d.dispatching())
    await create([2])
    await sleep(300)
    expect(receiver.received).toHaveLength(1)
  })
})
