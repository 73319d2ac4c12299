import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import { createPlant } from '../../src/plants/service.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { PostgresStore } from '../../src/store/postgres/index.js'
import type { AttemptResult, Store } from '../../src/store/types.js'
import { DELIVERY_ID_PATTERN, testEvent } from '../../src/webhooks/model.js'
import { createWebhook } from '../../src/webhooks/service.js'
import { admin, waitingOnLock } from '../helpers/postgres.js'
import { storeKinds } from '../helpers/stores.js'
import { insertUnfannedEvent } from '../helpers/webhooks.js'

const ALL = ['plant.created', 'plant.updated', 'plant.deleted'] as const

describe.each(storeKinds)('webhook store on $name', (kind) => {
  let url: string
  let store: Store
  let other: Store | undefined

  const open = async () => openStore(parseDatabaseUrl(url) ?? (undefined as never))
  beforeEach(async () => {
    url = await kind.freshUrl()
    store = await open()
    other = undefined
  })
  afterEach(async () => {
    await other?.close()
    await store.close()
  })

  const subscribe = (events: string[] = [...ALL]) =>
    createWebhook(store.webhooks, {
      url: 'https://receiver.example/hook',
      events: events as (typeof ALL)[number][],
      description: null,
    })
  /** A subscription disabled after a plant's event was queued for it: a delivery due, not sendable. */
  const disabledWithDueDelivery = async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    await store.webhooks.update(hook.id, {
      disabledAt: new Date(),
      disabledReason: 'manual',
      updatedAt: new Date(),
    })
  }
  const claim = (s: Store, owner: string, now = new Date(), limit = 100) =>
    s.webhooks.claim({ owner, now, leaseMs: 60_000, limit, perWebhook: 100, inFlight: new Map() })
  const result = (
    claimed: { id: string; webhookId: string },
    owner: string,
    outcome: Partial<AttemptResult>,
  ): AttemptResult => ({
    deliveryId: claimed.id,
    webhookId: claimed.webhookId,
    owner,
    at: new Date(),
    ok: true,
    statusCode: 200,
    error: null,
    durationMs: 5,
    body: null,
    bodyTruncated: false,
    nextAttemptAt: null,
    disableIfFailingSince: new Date(0),
    failingContinuesSince: new Date(0),
    ...outcome,
  })

  it('fans each event out once, to the enabled subscriptions of its type created before it', async () => {
    const early = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    const late = await subscribe()
    const deletes = await subscribe(['plant.deleted'])
    const off = await subscribe()
    await store.webhooks.update(off.id, {
      disabledAt: new Date(),
      disabledReason: 'manual',
      updatedAt: new Date(),
    })
    await createPlant(store.plants, { id: 2n, name: 'b' })
    // Each store fans an event out in the transaction that writes it: the dispatcher finds none.
    expect(await store.webhooks.fanOut(100, new Date())).toBe(0)
    expect(await store.webhooks.listDeliveries(early.id, { limit: 10 })).toHaveLength(2)
    expect(await store.webhooks.listDeliveries(late.id, { limit: 10 })).toHaveLength(1)
    // An event an earlier version left waiting is fanned out by the dispatcher, by the same rules.
    await insertUnfannedEvent(store, plantEvent('plant.created', { id: 3n, name: 'c' }, new Date()))
    expect(await store.webhooks.fanOut(100, new Date())).toBe(1)
    expect(await store.webhooks.fanOut(100, new Date())).toBe(0)
    expect(await store.webhooks.listDeliveries(early.id, { limit: 10 })).toHaveLength(3)
    expect(await store.webhooks.listDeliveries(late.id, { limit: 10 })).toHaveLength(2)
    expect(await store.webhooks.listDeliveries(deletes.id, { limit: 10 })).toHaveLength(0)
    expect(await store.webhooks.listDeliveries(off.id, { limit: 10 })).toHaveLength(0)
  })

  it('tells a dispatcher whether it has work: a subscription, or an event awaiting fan-out', async () => {
    expect(await store.webhooks.hasWork()).toBe(false)
    await createPlant(store.plants, { id: 1n, name: 'a' })
    // Each store fans the event out at commit: with no subscription, nothing is left to do.
    expect(await store.webhooks.hasWork()).toBe(false)
    await insertUnfannedEvent(store, plantEvent('plant.created', { id: 2n, name: 'b' }, new Date()))
    expect(await store.webhooks.hasWork()).toBe(true)
    await store.webhooks.fanOut(100, new Date())
    expect(await store.webhooks.hasWork()).toBe(false)
    const hook = await subscribe()
    expect(await store.webhooks.hasWork()).toBe(true)
    await store.webhooks.delete(hook.id)
    expect(await store.webhooks.hasWork()).toBe(false)
  })

  it.skipIf(kind.name !== 'sqlite')(
    "takes no write lock for a disabled subscription's due deliveries, which it may not claim",
    async () => {
      await disabledWithDueDelivery()
      // Another process holds the write lock: a claim that asked for it would wait, then fail.
      const holder = new Database((parseDatabaseUrl(url) as { path: string }).path)
      try {
        holder.exec('BEGIN IMMEDIATE')
        expect(await claim(store, 'a')).toEqual([])
      } finally {
        holder.close()
      }
    },
  )

  it.skipIf(kind.name !== 'postgres')(
    "opens no transaction for a disabled subscription's due deliveries, which it may not claim",
    async () => {
      await disabledWithDueDelivery()
      // The check before a claim takes a connection for its one query; the claim's transaction would
      // take another.
      const connect = vi.spyOn((store as PostgresStore).pool, 'connect')
      try {
        expect(await claim(store, 'a')).toEqual([])
        expect(connect).toHaveBeenCalledTimes(1)
      } finally {
        connect.mockRestore()
      }
    },
  )

  it('never leases one delivery to two dispatchers, even through two connections', async () => {
    other = await open()
    await subscribe()
    for (let i = 0; i < 20; i++) await createPlant(store.plants, { id: BigInt(i), name: `p${i}` })
    await store.webhooks.fanOut(100, new Date())
    const [a, b] = await Promise.all([claim(store, 'a', new Date(), 12), claim(other, 'b', new Date(), 12)])
    const ids = [...(a ?? []), ...(b ?? [])].map((d) => d.id)
    expect(ids).toHaveLength(20)
    expect(new Set(ids).size).toBe(20)
    expect(await claim(store, 'c')).toHaveLength(0)
  })

  it('lets another dispatcher take a delivery whose lease ran out, and ignores the late owner', async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    const [first] = await claim(store, 'dead')
    expect(first?.attempt).toBe(1)
    const later = new Date(Date.now() + 61_000)
    const [second] = await claim(store, 'alive', later)
    expect(second?.id).toBe(first?.id)
    expect(second?.attempt).toBe(2)
    await store.webhooks.complete([result(first as never, 'dead', { ok: false, statusCode: 500 })])
    await store.webhooks.complete([result(second as never, 'alive', {})])
    const [row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
    expect(row).toMatchObject({ status: 'succeeded', lastStatusCode: 200, attempts: 2 })
  })

  it('schedules a retry, fails after the last attempt, and disables a subscription failing too long', async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    const [d] = await claim(store, 'x')
    const retryAt = new Date(Date.now() + 5000)
    await store.webhooks.complete([
      result(d as never, 'x', {
        ok: false,
        statusCode: 502,
        error: 'answered 502',
        nextAttemptAt: retryAt,
        disableIfFailingSince: new Date(0),
      }),
    ])
    let [row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
    expect(row).toMatchObject({ status: 'pending', nextAttemptAt: retryAt, lastError: 'answered 502' })
    expect(await claim(store, 'x')).toHaveLength(0)
    const [again] = await claim(store, 'x', new Date(retryAt.getTime() + 1))
    const disabled = await store.webhooks.complete([
      result(again as never, 'x', {
        ok: false,
        statusCode: null,
        disableIfFailingSince: new Date(Date.now() + 10_000),
      }),
    ])
    expect(disabled).toEqual([hook.id])
    ;[row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
    expect(row?.status).toBe('failed')
    expect(await store.webhooks.find(hook.id)).toMatchObject({ disabledReason: 'failing' })
  })

  it('does not send to a disabled subscription', async () => {
    await disabledWithDueDelivery()
    expect(await claim(store, 'x')).toHaveLength(0)
  })

  it('caps the leases one subscription gets in a claim, counting the attempts it has in flight', async () => {
    const busy = await subscribe()
    const half = await subscribe()
    const quiet = await subscribe()
    for (let i = 0; i < 5; i++) await createPlant(store.plants, { id: BigInt(i), name: `p${i}` })
    await store.webhooks.fanOut(100, new Date())
    const claimed = await store.webhooks.claim({
      owner: 'x',
      now: new Date(),
      leaseMs: 1000,
      limit: 100,
      perWebhook: 2,
      inFlight: new Map([
        [busy.id, 2],
        [half.id, 1],
      ]),
    })
    const count = (id: string) => claimed.filter((c) => c.webhookId === id).length
    expect([count(busy.id), count(half.id), count(quiet.id)]).toEqual([0, 1, 2])
  })

  it('replays events since a time, queueing delivered ones again with the same event', async () => {
    const hook = await subscribe(['plant.created'])
    const start = new Date(Date.now() - 1000)
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await createPlant(store.plants, { id: 2n, name: 'b' })
    await store.webhooks.fanOut(100, new Date())
    for (const d of await claim(store, 'x')) await store.webhooks.complete([result(d, 'x', {})])
    expect(await store.webhooks.replay(hook.id, start, new Date())).toBe(2)
    expect(await store.webhooks.replay(hook.id, new Date(Date.now() + 60_000), new Date())).toBe(0)
    const rows = await store.webhooks.listDeliveries(hook.id, { limit: 10 })
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending'])
    expect(await claim(store, 'y')).toHaveLength(2)
  })

  it('requeues one delivery with a fresh schedule, and releases leases without counting them', async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    const [d] = await claim(store, 'x')
    await store.webhooks.release('x', [d?.id as string])
    const [row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
    expect(row?.attempts).toBe(0)
    const [again] = await claim(store, 'x')
    await store.webhooks.complete([result(again as never, 'x', { ok: false, nextAttemptAt: null })])
    const requeued = await store.webhooks.requeueDelivery(hook.id, d?.id as string, new Date())
    expect(requeued).toMatchObject({ status: 'pending', attempts: 0 })
    expect(
      await store.webhooks.requeueDelivery(hook.id, 'dlv_000000000000000000000000', new Date()),
    ).toBeUndefined()
  })

  it("makes a released delivery due by this process's clock, the one its claims compare with", async () => {
    await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    const [d] = await claim(store, 'x')
    // This process's clock a year behind the database server's: released by the server's clock, the
    // delivery would not be due to this process for a year.
    const behind = new Date(Date.now() - 365 * 86_400_000)
    vi.useFakeTimers({ toFake: ['Date'], now: behind })
    try {
      await store.webhooks.release('x', [d?.id as string])
    } finally {
      vi.useRealTimers()
    }
    expect((await claim(store, 'y', new Date(behind.getTime() + 1000))).map((c) => c.id)).toEqual([d?.id])
  })

  describe.skipIf(kind.name !== 'postgres')('a replay racing the retention sweep', () => {
    /** An event fanned out before its subscription existed: old, owed to no one, so sweepable. */
    const oldEvent = async () => {
      await createPlant(store.plants, { id: 1n, name: 'a' })
      await store.webhooks.fanOut(100, new Date())
      const hook = await subscribe(['plant.created'])
      const pool = (store as PostgresStore).pool
      const seq = (await pool.query<{ seq: string }>('SELECT seq::text AS seq FROM events')).rows[0]?.seq
      return { hook, pool, seq: seq as string }
    }
    const sweepNow = () =>
      store.maintenance.sweep({
        now: new Date(),
        eventsBefore: new Date(Date.now() + 1000),
        tokensBefore: new Date(0),
      })

    it('passes over an event the sweep deletes meanwhile, rather than failing', async () => {
      const { hook, pool, seq } = await oldEvent()
      const sweeper = await pool.connect()
      try {
        await sweeper.query('BEGIN')
        await sweeper.query('DELETE FROM events WHERE seq = $1', [seq])
        // The replay reads the event, then waits for the delete to end.
        const replayed = store.webhooks.replay(hook.id, new Date(0), new Date())
        await new Promise((r) => setTimeout(r, 300))
        await sweeper.query('COMMIT')
        expect(await replayed).toBe(0)
      } finally {
        sweeper.release()
      }
    })

    it('leaves an event a replay is queueing to the next sweep, rather than failing', async () => {
      const { hook, pool, seq } = await oldEvent()
      const replay = await pool.connect()
      try {
        // A replay that has read the event and not yet committed its delivery.
        await replay.query('BEGIN')
        await replay.query('SELECT 1 FROM events WHERE seq = $1 FOR KEY SHARE', [seq])
        const swept = sweepNow()
        await new Promise((r) => setTimeout(r, 300))
        await replay.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
           VALUES ('d1', $1, $2, 'pending', 0, now(), now())`,
          [hook.id, seq],
        )
        await replay.query('COMMIT')
        expect((await swept).events ?? 0).toBe(0)
        expect((await store.webhooks.listDeliveries(hook.id, { limit: 5 })).map((d) => d.status)).toEqual([
          'pending',
        ])
      } finally {
        replay.release()
      }
    })
  })

  it('requeues a delivery in flight without freeing it: it is claimable again once the attempt ends', async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    const [inFlight] = await claim(store, 'x')
    const requeued = await store.webhooks.requeueDelivery(hook.id, inFlight?.id as string, new Date())
    expect(requeued).toMatchObject({ status: 'pending', attempts: 0 })
    expect(await store.webhooks.replay(hook.id, new Date(0), new Date())).toBe(1)
    expect(await claim(store, 'y')).toHaveLength(0)
    expect(await claim(store, 'x')).toHaveLength(0)
    // The attempt in flight succeeds: it is recorded, and the delivery is due again at once.
    await store.webhooks.complete([result(inFlight as never, 'x', {})])
    const [row] = await store.webhooks.listDeliveries(hook.id, { limit: 1 })
    expect(row).toMatchObject({ status: 'pending', attempts: 0, lastStatusCode: 200 })
    const [again] = await claim(store, 'y')
    expect(again).toMatchObject({ id: inFlight?.id, attempt: 1 })
    // A lease that ran out (its owner presumed dead) is due at once after a requeue.
    await store.webhooks.requeueDelivery(hook.id, again?.id as string, new Date())
    expect(await claim(store, 'z', new Date(Date.now() + 61_000))).toHaveLength(1)
  })

  it('names a delivery by its event and its subscription: ids ascend with the events, and no subscription, not even a deleted one, shares its number', async () => {
    const first = await subscribe()
    const second = await subscribe()
    for (const id of [1n, 2n, 3n]) await createPlant(store.plants, { id, name: `p${id}` })
    /** A subscription's deliveries, oldest event first (a listing is newest first). */
    const deliveries = async (hookId: string) =>
      (await store.webhooks.listDeliveries(hookId, { limit: 10 })).reverse()
    const numberOf = (delivery: { id: string }) => delivery.id.slice(18)
    const a = await deliveries(first.id)
    const b = await deliveries(second.id)
    expect(a).toHaveLength(3)
    for (const d of [...a, ...b]) {
      expect(d.id).toMatch(DELIVERY_ID_PATTERN)
      expect(d.id.slice(4, 18)).toBe(d.eventSeq.toString(16).padStart(14, '0'))
    }
    expect(a.map((d) => d.id)).toEqual(a.map((d) => d.id).sort())
    expect(new Set(a.map(numberOf))).toEqual(new Set([numberOf(a[0] as never)]))
    expect(numberOf(b[0] as never)).not.toBe(numberOf(a[0] as never))

    // The newest subscription deleted, the next one is numbered past it: replayed the same events,
    // its deliveries get ids the deleted one's never had.
    await store.webhooks.delete(second.id)
    const third = await subscribe()
    expect(await store.webhooks.replay(third.id, new Date(0), new Date())).toBe(3)
    const c = await deliveries(third.id)
    expect(c.map((d) => d.eventSeq)).toEqual(b.map((d) => d.eventSeq))
    expect(numberOf(c[0] as never) > numberOf(b[0] as never)).toBe(true)

    // A test message is an event of its own, the latest: its id follows the subscription's others.
    const test = await store.webhooks.enqueueTest(first.id, testEvent(first.id))
    expect(test?.id).toMatch(DELIVERY_ID_PATTERN)
    expect(numberOf(test as never)).toBe(numberOf(a[0] as never))
    expect((test?.id as string) > (a[2]?.id as string)).toBe(true)
    // Found by its id, as the API finds it.
    expect(await store.webhooks.requeueDelivery(first.id, test?.id as string, new Date())).toMatchObject({
      eventType: 'webhook.test',
    })
  })

  it('queues a test message for one subscription only', async () => {
    const hook = await subscribe()
    const bystander = await subscribe()
    const delivery = await store.webhooks.enqueueTest(hook.id, {
      id: 'msg_test',
      type: 'webhook.test',
      occurredAt: new Date(),
      payload: '{"type":"webhook.test"}',
    })
    expect(delivery).toMatchObject({ eventId: 'msg_test', eventType: 'webhook.test', status: 'pending' })
    expect(await store.webhooks.fanOut(100, new Date())).toBe(0)
    expect(await store.webhooks.listDeliveries(bystander.id, { limit: 10 })).toHaveLength(0)
    const [claimed] = await claim(store, 'x')
    expect(claimed).toMatchObject({ payload: '{"type":"webhook.test"}', webhookId: hook.id })
  })

  it('records a batch of outcomes beside deletes of their subscriptions, neither failing the other', async () => {
    // Bounded rounds: the two transactions cross in only some of them.
    for (let round = 0; round < 20; round++) {
      const hooks = await Promise.all([subscribe(), subscribe(), subscribe()])
      for (let i = 1; i <= 5; i++) await createPlant(store.plants, { id: BigInt(round * 10 + i), name: 'a' })
      await store.webhooks.fanOut(500, new Date())
      const claimed = await claim(store, 'x', new Date(Date.now() + 1000))
      expect(claimed).toHaveLength(15)
      const failed = claimed.map((c) =>
        result(c, 'x', { ok: false, statusCode: 500, nextAttemptAt: new Date(Date.now() + 60_000) }),
      )
      await Promise.all([
        store.webhooks.complete(failed),
        ...hooks.map(async (h) => expect(await store.webhooks.delete(h.id)).toBe(true)),
      ])
    }
    expect((await store.webhooks.queueStats()).deliveries).toEqual({ pending: 0, succeeded: 0, failed: 0 })
  })

  it('deletes a subscription with its deliveries', async () => {
    const hook = await subscribe()
    await createPlant(store.plants, { id: 1n, name: 'a' })
    await store.webhooks.fanOut(100, new Date())
    expect(await store.webhooks.delete(hook.id)).toBe(true)
    expect(await store.webhooks.delete(hook.id)).toBe(false)
    expect(await store.webhooks.find(hook.id)).toBeUndefined()
    expect(await claim(store, 'x')).toHaveLength(0)
  })
  it.skipIf(kind.name !== 'postgres')(
    'hands back claimed attempts at stop though a batch of outcomes takes the same deliveries in another order',
    async () => {
      await subscribe()
      await createPlant(store.plants, { id: 1n, name: 'a' })
      await createPlant(store.plants, { id: 2n, name: 'b' })
      await store.webhooks.fanOut(100, new Date())
      const claimed = await claim(store, 'stopping')
      const ids = claimed.map((d) => d.id).sort()
      expect(ids).toHaveLength(2)
      await admin(url, async (outcomes) => {
        // The order the release's UPDATE takes the rows in: as they lie in the table.
        const stored = await outcomes.query<{ id: string }>('SELECT id FROM webhook_deliveries ORDER BY ctid')
        const [first, second] = stored.rows.map((r) => r.id)
        // Another transaction (a batch of outcomes) updating them the other way round.
        await outcomes.query('BEGIN')
        await outcomes.query("UPDATE webhook_deliveries SET last_error = 'late' WHERE id = $1", [second])
        const released = store.webhooks.release('stopping', ids)
        await waitingOnLock(url, '%SET lease_owner = NULL%')
        // Each now waits for the other: PostgreSQL aborts the release, which waited first.
        await outcomes.query("UPDATE webhook_deliveries SET last_error = 'late' WHERE id = $1", [first])
        await outcomes.query('COMMIT')
        await released
      })
      // Handed back: due at once, to any dispatcher.
      expect((await claim(store, 'next')).map((d) => d.id).sort()).toEqual(ids)
    },
  )
})
