import { once } from 'node:events'
import { createServer } from 'node:net'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { createPlant } from '../../src/plants/service.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { ANSWER_BODY_KEPT_BYTES } from '../../src/webhooks/model.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { appForSuite, errorOf } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { storeKinds } from '../helpers/stores.js'
import { attemptsStored } from '../helpers/webhooks.js'

// GET /webhooks/{id}/deliveries/{deliveryId}/attempts: every attempt a dispatcher made, as a client
// reads it. A dispatcher with short retries sends to a local receiver; the listing is read over HTTP.

interface Attempt {
  attemptedAt: string
  durationMs: number
  statusCode: number | null
  error: string | null
  body: string | null
  bodyTruncated: boolean
}

interface Delivery {
  id: string
  status: string
  attempts: number
  lastAttemptAt: string | null
}

/** A port of 127.0.0.1 on which nothing listens: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

describe.each(storeKinds)('webhook delivery attempts on $name', (kind) => {
  // One app for the block: each test has subscriptions, a receiver and dispatchers of its own.
  const t = appForSuite(kind, { allowPrivateWebhookUrls: true }, ['webhooks:manage'])
  let receiver: Receiver
  let dispatchers: Dispatcher[]
  const call = (method: string, url: string, body?: unknown) =>
    t.app.inject({
      method: method as 'GET',
      url,
      headers: {
        authorization: `Bearer ${t.bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    })

  beforeEach(async () => {
    receiver = await startReceiver()
    dispatchers = []
  })
  afterEach(async () => {
    for (const d of dispatchers) await d.stop(0)
    await receiver.close()
    // So that no later test's events are queued for this one's subscriptions.
    for (const w of await t.store.webhooks.list()) await t.store.webhooks.delete(w.id)
  })

  function dispatch(
    options: { retrySchedule?: number[]; timeoutMs?: number; allowPrivateUrls?: boolean } = {},
  ) {
    const timeoutMs = options.timeoutMs ?? 5000
    const d = new Dispatcher({
      store: t.store.webhooks,
      sender: new WebhookSender({ timeoutMs, allowPrivateUrls: options.allowPrivateUrls ?? true }),
      logger: createLogger('silent'),
      retrySchedule: options.retrySchedule ?? [],
      timeoutMs,
      disableAfterMs: 86_400_000,
      pollIntervalMs: 10,
    })
    dispatchers.push(d)
    d.start()
    return d
  }

  const subscribe = async (url = receiver.url) => {
    const res = await call('POST', '/webhooks', { url, events: ['plant.created'] })
    expect(res.statusCode).toBe(201)
    return (JSON.parse(res.body) as { id: string }).id
  }
  const deliveries = async (id: string) =>
    (JSON.parse((await call('GET', `/webhooks/${id}/deliveries`)).body) as { data: Delivery[] }).data
  /** The subscription's only delivery, once it is no longer pending. */
  const finished = (id: string) =>
    vi.waitFor(
      async () => {
        const [delivery] = await deliveries(id)
        if (delivery?.status === 'pending' || delivery === undefined) throw new Error('still pending')
        return delivery
      },
      { timeout: 15_000, interval: 20 },
    )
  const attemptsOf = async (id: string, deliveryId: string, query = '') => {
    const res = await call('GET', `/webhooks/${id}/deliveries/${deliveryId}/attempts${query}`)
    expect(res.statusCode).toBe(200)
    return (JSON.parse(res.body) as { data: Attempt[] }).data
  }

  it("keeps a failed attempt's status and the first KiB of its answer, and the success after it, newest first", async () => {
    const id = await subscribe()
    // Bytes that are not UTF-8 (0xff), a NUL and a character cut at the end of the kept KiB.
    const lead = Buffer.concat([Buffer.from('refused: '), Buffer.from([0xff, 0x00])])
    const filler = Buffer.alloc(ANSWER_BODY_KEPT_BYTES - lead.length - 1, 'a')
    const answer = Buffer.concat([lead, filler, Buffer.from('é and more after it')])
    receiver.respondWith(500, answer)
    dispatch({ retrySchedule: [10] })
    await createPlant(t.store.plants, { id: 1n, name: 'attempted twice' })
    await receiver.waitFor(1)
    receiver.respondWith(200, 'thanks')
    const delivery = await finished(id)
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 })

    const [success, failure] = await attemptsOf(id, delivery.id)
    expect(success).toEqual({
      attemptedAt: delivery.lastAttemptAt,
      durationMs: expect.any(Number),
      statusCode: 200,
      error: null,
      body: 'thanks',
      bodyTruncated: false,
    })
    expect(failure).toMatchObject({ statusCode: 500, error: 'answered 500', bodyTruncated: true })
    expect(failure?.body).toBe(`refused: \uFFFD\u0000${filler.toString()}\uFFFD`)
    expect(Date.parse(failure?.attemptedAt ?? '')).toBeLessThan(Date.parse(success?.attemptedAt ?? ''))
  })

  it('keeps what went wrong when no answer came: a refused connection, a timeout, a refused address', async () => {
    const refusedConnection = await subscribe(`http://127.0.0.1:${await closedPort()}/hook`)
    const timedOut = await subscribe()
    receiver.respondWith('hang')
    dispatch({ timeoutMs: 300 })
    await createPlant(t.store.plants, { id: 2n, name: 'no answer' })
    for (const [id, error] of [
      [refusedConnection, /ECONNREFUSED/],
      [timedOut, /^timed out after 300 ms$/],
    ] as const) {
      const delivery = await finished(id)
      expect(delivery.status).toBe('failed')
      const [attempt] = await attemptsOf(id, delivery.id)
      expect(attempt).toMatchObject({ statusCode: null, body: null, bodyTruncated: false })
      expect(attempt?.error).toMatch(error)
    }

    // A dispatcher that refuses private addresses, as one does unless told otherwise.
    for (const d of dispatchers.splice(0)) await d.stop(0)
    await call('DELETE', `/webhooks/${refusedConnection}`)
    await call('DELETE', `/webhooks/${timedOut}`)
    const refusedAddress = await subscribe()
    dispatch({ allowPrivateUrls: false })
    await createPlant(t.store.plants, { id: 3n, name: 'refused' })
    const delivery = await finished(refusedAddress)
    const [attempt] = await attemptsOf(refusedAddress, delivery.id)
    expect(attempt).toMatchObject({ statusCode: null, body: null })
    expect(attempt?.error).toMatch(/^refused: /)
  })

  it('pages attempts as deliveries are paged, each page linking to the next until the last', async () => {
    const id = await subscribe()
    receiver.respondWith(503)
    dispatch({ retrySchedule: [1, 1, 1, 1] })
    await createPlant(t.store.plants, { id: 4n, name: 'five attempts' })
    const delivery = await finished(id)
    expect(delivery).toMatchObject({ status: 'failed', attempts: 5 })
    const all = await attemptsOf(id, delivery.id)
    expect(all).toHaveLength(5)
    const times = all.map((a) => Date.parse(a.attemptedAt))
    expect([...times].sort((a, b) => b - a)).toEqual(times)

    const walked: Attempt[] = []
    const links: string[] = []
    let next: string | undefined = `/webhooks/${id}/deliveries/${delivery.id}/attempts?limit=2`
    while (next !== undefined) {
      const page = await call('GET', next)
      expect(page.statusCode).toBe(200)
      walked.push(...(JSON.parse(page.body) as { data: Attempt[] }).data)
      const link = page.headers.link as string | undefined
      if (link !== undefined) links.push(link)
      next = link?.match(/^<([^>]+)>; rel="next"$/)?.[1]
    }
    expect(walked).toEqual(all)
    expect(links).toHaveLength(2)
    for (const link of links) expect(link).toContain('limit=2&after=')
    // A full last page has no link: nothing follows it.
    const whole = await call('GET', `/webhooks/${id}/deliveries/${delivery.id}/attempts?limit=5`)
    expect(whole.headers.link).toBeUndefined()

    for (const query of ['limit=0', 'limit=501', 'limit=x', 'after=1.', 'after=abc', 'limit=1&limit=2']) {
      const res = await call('GET', `/webhooks/${id}/deliveries/${delivery.id}/attempts?${query}`)
      expect([query, res.statusCode, errorOf(res).error]).toEqual([query, 400, errors.QUERY_INVALID.code])
    }
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries/${delivery.id}/attempts?limit=0`))).toEqual({
      error: errors.QUERY_INVALID.code,
      message: 'The query parameter limit must be an integer from 1 to 500.',
    })
  })

  it('answers 404 for an unknown subscription or delivery, or one of another subscription, and 405 for other methods', async () => {
    const id = await subscribe()
    const other = await subscribe()
    const test = JSON.parse((await call('POST', `/webhooks/${other}/test`)).body) as { id: string }
    // No attempt yet: an empty page, not a 404.
    expect(await attemptsOf(other, test.id)).toEqual([])
    for (const [webhookId, deliveryId, entry] of [
      ['wh_AAAAAAAAAAAAAAAAAAAAAA', test.id, errors.WEBHOOK_NOT_FOUND],
      ['nope', 'bogus', errors.WEBHOOK_NOT_FOUND],
      [id, 'dlv_000000000000000000000000', errors.DELIVERY_NOT_FOUND],
      [id, 'bogus', errors.DELIVERY_NOT_FOUND],
      [id, test.id, errors.DELIVERY_NOT_FOUND],
    ] as const) {
      const res = await call('GET', `/webhooks/${webhookId}/deliveries/${deliveryId}/attempts`)
      expect([webhookId, deliveryId, res.statusCode, errorOf(res).error]).toEqual([
        webhookId,
        deliveryId,
        404,
        entry.code,
      ])
    }
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call(method, `/webhooks/${other}/deliveries/${test.id}/attempts`)
      expect([method, res.statusCode, errorOf(res).error]).toEqual([
        method,
        405,
        errors.METHOD_NOT_ALLOWED.code,
      ])
      expect(res.headers.allow).toBe('GET, HEAD')
    }
  })

  it('deletes attempts with their deliveries: by the retention sweep, and with their subscription', async () => {
    const swept = await subscribe()
    const deleted = await subscribe()
    receiver.respondWith(500, 'no')
    dispatch()
    await createPlant(t.store.plants, { id: 5n, name: 'failed once' })
    const delivery = await finished(swept)
    await finished(deleted)
    const kept = await attemptsStored(t.store)

    expect((await call('DELETE', `/webhooks/${deleted}`)).statusCode).toBe(204)
    expect(await attemptsStored(t.store)).toBe(kept - 1)

    // What --events-retention runs: every delivery finished before now is old enough, and every
    // attempt belongs to a finished one.
    const now = new Date(Date.now() + 60_000)
    const counts = await t.store.maintenance.sweep({ now, eventsBefore: now, tokensBefore: new Date(0) })
    expect(counts.webhook_deliveries).toBeGreaterThanOrEqual(1)
    expect(await attemptsStored(t.store)).toBe(0)
    const gone = await call('GET', `/webhooks/${swept}/deliveries/${delivery.id}/attempts`)
    expect([gone.statusCode, errorOf(gone).error]).toEqual([404, errors.DELIVERY_NOT_FOUND.code])
  })
})
