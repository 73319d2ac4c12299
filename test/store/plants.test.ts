import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { plantEvent } from '../../src/plants/events.js'
import type { Plant } from '../../src/plants/model.js'
import { changePlant, createPlant, deletePlant, readPlant } from '../../src/plants/service.js'
import type { IdempotencyRecord, ListQuery, PlantStore, Store } from '../../src/store/types.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('plant store on $name', (kind) => {
  let store: Store
  beforeEach(async () => {
    store = (await openFresh(kind)).store
  })
  afterEach(() => store.close())

  const record = (key: string, expiresAt: Date, fingerprint = 'f1'): IdempotencyRecord => ({
    tokenId: 'tok1',
    key,
    fingerprint,
    status: 200,
    body: `{"key":"${key}"}`,
    expiresAt,
  })
  const later = () => new Date(Date.now() + 60_000)
  const types = async () => (await store.events.listSince(0, 100)).map((e) => e.type)
  const atVersion = (expected: number) => (_plant: Plant, version: number) => version === expected

  /** The plants of a listing, without their keys. */
  const listed = async (query: ListQuery) => (await store.plants.list(query)).map(({ plant }) => plant)
  const listedIds = async (query: ListQuery) => (await listed(query)).map((plant) => plant.id)

  it('lists in id order from after, with a limit and a tag, over the whole int64 range', async () => {
    const ids = [-9223372036854775808n, -1n, 0n, 5n, 9007199254740993n, 9223372036854775807n]
    for (const id of ids)
      await store.plants.create({ id, name: `n${id}`, ...(id > 0n ? { tag: 'pos' } : {}) })
    expect(await listedIds({ limit: 100 })).toEqual(ids)
    expect(await listedIds({ limit: 2 })).toEqual(ids.slice(0, 2))
    expect(await listedIds({ after: { id: -1n }, limit: 2 })).toEqual([0n, 5n])
    expect(await store.plants.list({ after: { id: 9223372036854775807n }, limit: 10 })).toEqual([])
    expect(await listedIds({ tags: ['pos'], after: { id: 5n }, limit: 10 })).toEqual([
      9007199254740993n,
      9223372036854775807n,
    ])
    // The id order gives no key.
    expect((await store.plants.list({ limit: 1, after: { id: -9223372036854775808n } }))[0]).toEqual({
      plant: { id: -1n, name: 'n-1' },
    })
  })

  it('pages plants in id order with exact ids, by cursor and by tag', async () => {
    const ids = [-9223372036854775808n, -1n, 0n, 5n, 9007199254740993n, 9223372036854775807n]
    for (const id of ids) {
      await store.plants.create({
        id,
        name: `n"${id},\u0001é`,
        ...(id > 0n ? { tag: 'pos' } : {}),
      })
    }
    const all = await listed({ limit: 100 })
    expect(all.map((plant) => plant.id)).toEqual(ids)
    expect(all[0]).toEqual({ id: -9223372036854775808n, name: 'n"-9223372036854775808,\u0001é' })
    expect(all[3]).toEqual({ id: 5n, name: 'n"5,\u0001é', tag: 'pos' })
    expect(await listed({ limit: 2 })).toEqual(all.slice(0, 2))
    expect(await listed({ after: { id: 0n }, limit: 3 })).toEqual(all.slice(3))
    expect(await listed({ after: { id: 9007199254740992n }, limit: 1 })).toEqual(all.slice(4, 5))
    expect(await listed({ tags: ['pos'], limit: 1 })).toEqual(all.slice(3, 4))
    expect(await listed({ tags: ['pos'], after: { id: 5n }, limit: 2 })).toEqual(all.slice(4))
    expect(await listed({ after: { id: 9223372036854775807n }, limit: 10 })).toEqual([])
    expect(await listed({ tags: ['none'], limit: 10 })).toEqual([])
  })

  it('reads a plant with its version, which each update bumps', async () => {
    await store.plants.create({ id: 1n, name: 'a', tag: 't' })
    expect(await store.plants.read(1n)).toEqual({ plant: { id: 1n, name: 'a', tag: 't' }, version: 1 })
    const renamed = await store.plants.update(1n, { name: 'b' })
    expect(renamed).toEqual({ outcome: 'done', plant: { id: 1n, name: 'b', tag: 't' }, version: 2 })
    const untagged = await store.plants.update(1n, { tag: null })
    expect(untagged).toEqual({ outcome: 'done', plant: { id: 1n, name: 'b' }, version: 3 })
    expect(await store.plants.read(1n)).toEqual({ plant: { id: 1n, name: 'b' }, version: 3 })
    expect(await store.plants.read(2n)).toBeUndefined()
  })

  it('keeps the version and writes no event for a change that changes nothing', async () => {
    await store.plants.create({ id: 1n, name: 'a', tag: 't' })
    const event = (plant: { id: bigint; name: string }) => plantEvent('plant.updated', plant)
    expect(await store.plants.update(1n, { name: 'a', tag: 't' }, { event })).toEqual({
      outcome: 'done',
      plant: { id: 1n, name: 'a', tag: 't' },
      version: 1,
    })
    expect(await store.plants.update(1n, {}, { event, precondition: atVersion(1) })).toMatchObject({
      version: 1,
    })
    expect(await types()).toEqual([])
  })

  it('writes only when the precondition holds of the stored plant and version', async () => {
    await store.plants.create({ id: 1n, name: 'a' })
    expect(await store.plants.update(1n, { name: 'x' }, { precondition: atVersion(2) })).toEqual({
      outcome: 'precondition-failed',
    })
    expect(await store.plants.remove(1n, { precondition: atVersion(2) })).toEqual({
      outcome: 'precondition-failed',
    })
    expect((await store.plants.read(1n))?.plant.name).toBe('a')
    expect((await store.plants.update(1n, { name: 'x' }, { precondition: atVersion(1) })).outcome).toBe(
      'done',
    )
    expect(await store.plants.update(9n, { name: 'x' })).toEqual({ outcome: 'missing' })
    expect(await store.plants.remove(9n)).toEqual({ outcome: 'missing' })

    // Deleted and created again, the plant is at version 1 once more: the condition sees its content.
    await store.plants.remove(1n)
    await store.plants.create({ id: 1n, name: 'b' })
    const wasA = (plant: Plant, version: number) => version === 1 && plant.name === 'a'
    expect(await store.plants.update(1n, { name: 'y' }, { precondition: wasA })).toEqual({
      outcome: 'precondition-failed',
    })
    expect(await store.plants.remove(1n, { precondition: wasA })).toEqual({ outcome: 'precondition-failed' })
    expect((await store.plants.read(1n))?.plant.name).toBe('b')
  })

  it('refuses an If-Match for a plant deleted and created again just before the write (412)', async () => {
    await store.plants.create({ id: 1n, name: 'a' })
    const { etag } = await readPlant(store.plants, 1n)
    // Another client deletes the plant and creates a different one under its id, right before the
    // write: the new plant is at version 1 too.
    const racing: PlantStore = Object.create(store.plants)
    const recreate = async () => {
      await store.plants.remove(1n)
      await store.plants.create({ id: 1n, name: 'b' })
    }
    racing.update = async (...args) => {
      await recreate()
      return store.plants.update(...args)
    }
    racing.remove = async (...args) => {
      await recreate()
      return store.plants.remove(...args)
    }
    await expect(changePlant(racing, 1n, { name: 'c' }, { ifMatch: [etag] })).rejects.toMatchObject({
      entry: errors.PRECONDITION_FAILED,
    })
    await expect(deletePlant(racing, 1n, { ifMatch: [etag] })).rejects.toMatchObject({
      entry: errors.PRECONDITION_FAILED,
    })
    expect((await store.plants.read(1n))?.plant.name).toBe('b')
  })

  it('dates a create after the delete that freed its id, though the create was asked for first', async () => {
    await createPlant(store.plants, { id: 1n, name: 'first' })
    // The create is asked for while the plant still exists, and reaches the store only after another
    // client's delete has committed: it is the later change, and its event must not say otherwise.
    let admit = () => {}
    const admitted = new Promise<void>((resolve) => {
      admit = resolve
    })
    const held: PlantStore = Object.create(store.plants)
    held.create = async (...args) => {
      await admitted
      return store.plants.create(...args)
    }
    const asked = Date.now()
    vi.useFakeTimers({ toFake: ['Date'], now: asked })
    try {
      const second = createPlant(held, { id: 1n, name: 'second' })
      vi.setSystemTime(asked + 5)
      await deletePlant(store.plants, 1n)
      admit()
      await second
    } finally {
      vi.useRealTimers()
    }
    const events = await store.events.listSince(0, 10)
    expect(events.map((e) => e.type)).toEqual(['plant.created', 'plant.deleted', 'plant.created'])
    // Subscribers order a plant's events by their timestamp (messages arrive in any order).
    const times = events.map((e) => JSON.parse(e.payload).timestamp as string)
    expect((times[2] as string) >= (times[1] as string)).toBe(true)
    expect(events[2]?.occurredAt.getTime()).toBeGreaterThanOrEqual(events[1]?.occurredAt.getTime() as number)
    expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'second' })
  })

  it('removes a plant and answers it as it was', async () => {
    await store.plants.create({ id: 1n, name: 'a', tag: 't' })
    expect(await store.plants.remove(1n)).toEqual({
      outcome: 'done',
      plant: { id: 1n, name: 'a', tag: 't' },
      version: 1,
    })
    expect(await store.plants.get(1n)).toBeUndefined()
  })

  it('writes plant.updated and plant.deleted events with the change, and none when nothing changed', async () => {
    await store.plants.create(
      { id: 7n, name: 'a' },
      { event: (at) => plantEvent('plant.created', { id: 7n, name: 'a' }, at) },
    )
    const updated = (plant: { id: bigint; name: string }) => plantEvent('plant.updated', plant)
    await store.plants.update(7n, { tag: 'x' }, { event: updated })
    await store.plants.update(7n, { tag: 'y' }, { event: updated, precondition: atVersion(1) })
    await store.plants.update(8n, { tag: 'y' }, { event: updated })
    await store.plants.remove(7n, { event: (plant) => plantEvent('plant.deleted', plant) })
    expect(await types()).toEqual(['plant.created', 'plant.updated', 'plant.deleted'])
    const events = await store.events.listSince(0, 100)
    expect(events[1]?.payload).toContain('"data":{"id":7,"name":"a","tag":"x"}')
    expect(events[2]?.payload).toContain('"data":{"id":7,"name":"a","tag":"x"}')
  })

  it('stores an idempotency record with the plant, and only with it', async () => {
    expect(await store.plants.create({ id: 1n, name: 'a' }, { idempotency: record('k1', later()) })).toBe(
      'created',
    )
    const found = await store.idempotency.find('tok1', 'k1', new Date())
    expect(found).toMatchObject({
      tokenId: 'tok1',
      key: 'k1',
      fingerprint: 'f1',
      status: 200,
      body: '{"key":"k1"}',
    })
    expect(await store.idempotency.find('tok2', 'k1', new Date())).toBeUndefined()
    // The id exists: neither the plant nor the record is written.
    expect(await store.plants.create({ id: 1n, name: 'b' }, { idempotency: record('k2', later()) })).toBe(
      'exists',
    )
    expect(await store.idempotency.find('tok1', 'k2', new Date())).toBeUndefined()
  })

  it('refuses a create whose key is held by an unexpired record, writing nothing', async () => {
    await store.plants.create({ id: 1n, name: 'a' }, { idempotency: record('k1', later()) })
    const event = (at: Date) => plantEvent('plant.created', { id: 2n, name: 'b' }, at)
    const outcomes = await Promise.all([
      store.plants.create({ id: 2n, name: 'b' }, { idempotency: record('k1', later(), 'f2'), event }),
      store.plants.create({ id: 3n, name: 'c' }),
    ])
    expect(outcomes).toEqual(['key-taken', 'created'])
    expect(await store.plants.get(2n)).toBeUndefined()
    expect(await types()).toEqual([])
    expect((await store.idempotency.find('tok1', 'k1', new Date()))?.fingerprint).toBe('f1')
  })

  it('creates a plant whose id a create of the same batch was refused for its held key', async () => {
    await store.plants.create({ id: 1n, name: 'a' }, { idempotency: record('k1', later()) })
    const created = (plant: { id: bigint; name: string }) => (at: Date) =>
      plantEvent('plant.created', plant, at)
    const plain = await Promise.all([
      store.plants.create(
        { id: 2n, name: 'b' },
        { idempotency: record('k1', later(), 'f2'), event: created({ id: 2n, name: 'b' }) },
      ),
      store.plants.create({ id: 2n, name: 'c' }, { event: created({ id: 2n, name: 'c' }) }),
      store.plants.create({ id: 2n, name: 'd' }, { event: created({ id: 2n, name: 'd' }) }),
    ])
    expect(plain).toEqual(['key-taken', 'created', 'exists'])
    expect(await store.plants.get(2n)).toEqual({ id: 2n, name: 'c' })
    // The next create of the id may carry a key of its own; it is taken with the plant.
    const keyed = await Promise.all([
      store.plants.create({ id: 3n, name: 'e' }, { idempotency: record('k1', later(), 'f3') }),
      store.plants.create(
        { id: 3n, name: 'f' },
        { idempotency: record('k2', later()), event: created({ id: 3n, name: 'f' }) },
      ),
      store.plants.create({ id: 3n, name: 'g' }, { idempotency: record('k3', later()) }),
    ])
    expect(keyed).toEqual(['key-taken', 'created', 'exists'])
    expect(await store.plants.get(3n)).toEqual({ id: 3n, name: 'f' })
    expect((await store.idempotency.find('tok1', 'k2', new Date()))?.body).toBe('{"key":"k2"}')
    expect(await store.idempotency.find('tok1', 'k3', new Date())).toBeUndefined()
    const payloads = (await store.events.listSince(0, 100)).map((e) => e.payload)
    expect(payloads).toHaveLength(2)
    expect(payloads[0]).toContain('"data":{"id":2,"name":"c"}')
    expect(payloads[1]).toContain('"data":{"id":3,"name":"f"}')
  })

  it('forgets expired records: not found, replaced by a new create, purged', async () => {
    const past = new Date(Date.now() - 1000)
    await store.plants.create({ id: 1n, name: 'a' }, { idempotency: record('old', past) })
    await store.plants.create({ id: 2n, name: 'b' }, { idempotency: record('gone', past) })
    expect(await store.idempotency.find('tok1', 'old', new Date())).toBeUndefined()
    expect(
      await store.plants.create({ id: 3n, name: 'c' }, { idempotency: record('old', later(), 'f3') }),
    ).toBe('created')
    expect((await store.idempotency.find('tok1', 'old', new Date()))?.fingerprint).toBe('f3')
    expect(await store.idempotency.purgeExpired(new Date())).toBe(1)
    expect(await store.idempotency.purgeExpired(new Date())).toBe(0)
  })
})
