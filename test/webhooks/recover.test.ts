import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { createPlant } from '../../src/plants/service.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { appForSuite, errorOf } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { storeKinds } from '../helpers/stores.js'

// POST /webhooks/{id}/recover: the deliveries that ended failed since a time go again, and only those.

interface Delivery {
  id: string
  eventId: string
  status: string
  attempts: number
  nextAttemptAt: string | null
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(storeKinds)('recovering failed webhook deliveries on $name', (kind) => {
  const t = appForSuite(kind, { allowPrivateWebhookUrls: true }, ['webhooks:manage'])
  let receiver: Receiver
  let dispatcher: Dispatcher | undefined
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
  })
  afterEach(async () => {
    await dispatcher?.stop(0)
    dispatcher = undefined
    await receiver.close()
  })

  /** One attempt a delivery, so that a refused one is failed at once. */
  const dispatch = () => {
    dispatcher = new Dispatcher({
      store: t.store.webhooks,
      sender: new WebhookSender({ timeoutMs: 5000, allowPrivateUrls: true }),
      logger: createLogger('silent'),
      retrySchedule: [],
      timeoutMs: 5000,
      disableAfterMs: 86_400_000,
      pollIntervalMs: 10,
    })
    dispatcher.start()
  }
  const deliveries = async (id: string) =>
    (JSON.parse((await call('GET', `/webhooks/${id}/deliveries`)).body) as { data: Delivery[] }).data
  /** Waits until the subscription's deliveries, newest first, have these statuses. */
  const statuses = (id: string, expected: string[]) =>
    vi.waitFor(
      async () => {
        const found = await deliveries(id)
        expect(found.map((d) => d.status)).toEqual(expected)
        return found
      },
      { timeout: 15_000, interval: 20 },
    )

  it('resends only the deliveries that ended failed since the time, never succeeded or pending ones', async () => {
    const res = await call('POST', '/webhooks', { url: receiver.url, events: ['plant.created'] })
    const { id } = JSON.parse(res.body) as { id: string }
    receiver.respondWith(500)
    dispatch()
    await createPlant(t.store.plants, { id: 11n, name: 'failed before' })
    await statuses(id, ['failed'])
    // Apart by a few milliseconds, as the stores keep times to the millisecond.
    await sleep(5)
    const since = new Date().toISOString()
    await sleep(5)
    await createPlant(t.store.plants, { id: 12n, name: 'failed after' })
    await statuses(id, ['failed', 'failed'])
    receiver.respondWith(200)
    await createPlant(t.store.plants, { id: 13n, name: 'succeeded' })
    await statuses(id, ['succeeded', 'failed', 'failed'])
    await dispatcher?.stop(0)
    await createPlant(t.store.plants, { id: 14n, name: 'pending' })
    const [pending, succeeded, failedAfter, failedBefore] = (await statuses(id, [
      'pending',
      'succeeded',
      'failed',
      'failed',
    ])) as Delivery[]

    const recovered = await call('POST', `/webhooks/${id}/recover`, { since })
    expect([recovered.statusCode, JSON.parse(recovered.body)]).toEqual([202, { queued: 1 }])
    const after = await deliveries(id)
    expect(after).toEqual([
      pending,
      succeeded,
      { ...failedAfter, status: 'pending', attempts: 0, nextAttemptAt: expect.any(String) },
      failedBefore,
    ])
    // Requeued already: no longer failed, so not queued twice.
    expect(JSON.parse((await call('POST', `/webhooks/${id}/recover`, { since })).body)).toEqual({ queued: 0 })
    const earlier = await call('POST', `/webhooks/${id}/recover`, { since: '2000-01-01T00:00:00Z' })
    expect(JSON.parse(earlier.body)).toEqual({ queued: 1 })

    dispatch()
    await statuses(id, ['succeeded', 'succeeded', 'succeeded', 'succeeded'])
    // The first three went once each; then the pending one and the two recovered, with their ids.
    const sent = receiver.received.map((r) => r.headers['webhook-id'])
    expect(sent.slice(0, 3)).toEqual([failedBefore?.eventId, failedAfter?.eventId, succeeded?.eventId])
    expect(sent.slice(3).sort()).toEqual(
      [pending?.eventId, failedAfter?.eventId, failedBefore?.eventId].sort(),
    )
    // Each recovered delivery keeps its failed attempt beside the one that succeeded.
    const attempts = await call('GET', `/webhooks/${id}/deliveries/${failedAfter?.id}/attempts`)
    const statusCodes = (JSON.parse(attempts.body) as { data: Array<{ statusCode: number }> }).data.map(
      (a) => a.statusCode,
    )
    expect(statusCodes).toEqual([200, 500])
  })

  it('refuses a since that names no instant or is in the future, as a replay does; 404 and 405 as its siblings', async () => {
    const res = await call('POST', '/webhooks', { url: receiver.url })
    const { id } = JSON.parse(res.body) as { id: string }
    for (const since of ['yesterday', '2999-01-01T00:00:00Z', 5, '2026-02-30T00:00:00Z', null]) {
      const bad = await call('POST', `/webhooks/${id}/recover`, { since })
      expect([since, bad.statusCode, errorOf(bad)]).toEqual([
        since,
        400,
        { error: errors.REPLAY_SINCE_INVALID.code, message: errors.REPLAY_SINCE_INVALID.message },
      ])
    }
    const ok = await call('POST', `/webhooks/${id}/recover`, { since: '2016-12-31T23:59:60Z' })
    expect([ok.statusCode, JSON.parse(ok.body)]).toEqual([202, { queued: 0 }])

    for (const missing of ['wh_AAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      const res = await call('POST', `/webhooks/${missing}/recover`, { since: '2020-01-01T00:00:00Z' })
      expect([res.statusCode, errorOf(res).error]).toEqual([404, errors.WEBHOOK_NOT_FOUND.code])
    }
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call(method, `/webhooks/${id}/recover`)
      expect([method, res.statusCode, errorOf(res).error]).toEqual([
        method,
        405,
        errors.METHOD_NOT_ALLOWED.code,
      ])
      expect(res.headers.allow).toBe('POST')
    }
  })
})
