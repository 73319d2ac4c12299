import { describe, expect, it } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import type { NewPlant } from '../../src/plants/model.js'
import type { BatchCreateItem, IdempotencyRecord, Store } from '../../src/store/types.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

const withEvent = (plant: NewPlant): BatchCreateItem => ({
  plant,
  event: (at) => plantEvent('plant.created', plant, at),
})

const record = (key: string): IdempotencyRecord => ({
  tokenId: 'tok',
  key,
  fingerprint: 'f',
  status: 200,
  body: '{}',
  expiresAt: new Date(Date.now() + 60_000),
})

async function eventTypes(store: Store): Promise<string[]> {
  return (await store.events.listSince(0, 1000)).map(
    (e) => `${e.type} ${/"id":(-?\d+)/.exec(e.payload)?.[1]}`,
  )
}

describe.each(storeKinds)('plant store batch writes on $name', (kind) => {
  const withStore = async (test: (store: Store) => Promise<void>) => {
    const { store } = await openFresh(kind)
    try {
      await test(store)
    } finally {
      await store.close()
    }
  }

  it('creates every plant with its event, in order', () =>
    withStore(async (store) => {
      const outcome = await store.plants.createMany([
        withEvent({ id: 3n, name: 'c', tag: 't' }),
        withEvent({ id: 1n, name: 'a' }),
      ])
      expect(outcome).toEqual({ outcome: 'created' })
      expect(await store.plants.get(3n)).toEqual({ id: 3n, name: 'c', tag: 't' })
      expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'a' })
      expect(await eventTypes(store)).toEqual(['plant.created 3', 'plant.created 1'])
    }))

  it('stores each plant with its folded name, so that search finds it', () =>
    withStore(async (store) => {
      await store.plants.createMany([
        withEvent({ id: 1n, name: 'ÖLBAUM' }),
        withEvent({ id: 2n, name: 'Fern' }),
      ])
      const found = await store.plants.list({ text: 'ölb', limit: 10 })
      expect(found.map(({ plant }) => plant.id)).toEqual([1n])
    }))

  it('creates none when an id is stored, or repeated, naming the first such item', () =>
    withStore(async (store) => {
      await store.plants.create({ id: 5n, name: 'stored' })
      const exists = await store.plants.createMany([
        withEvent({ id: 6n, name: 'new' }),
        withEvent({ id: 5n, name: 'again' }),
      ])
      expect(exists).toEqual({ outcome: 'exists', index: 1 })
      const repeated = await store.plants.createMany([
        withEvent({ id: 7n, name: 'new' }),
        withEvent({ id: 7n, name: 'twice' }),
      ])
      expect(repeated).toEqual({ outcome: 'exists', index: 1 })
      expect(await store.plants.get(6n)).toBeUndefined()
      expect(await store.plants.get(7n)).toBeUndefined()
      expect(await eventTypes(store)).toEqual([])
    }))

  it('stores the idempotency record with the plants, and writes nothing when its key is held', () =>
    withStore(async (store) => {
      expect(await store.plants.createMany([withEvent({ id: 1n, name: 'a' })], record('k'))).toEqual({
        outcome: 'created',
      })
      expect((await store.idempotency.find('tok', 'k', new Date()))?.body).toBe('{}')
      expect(await store.plants.createMany([withEvent({ id: 2n, name: 'b' })], record('k'))).toBe('key-taken')
      expect(await store.plants.get(2n)).toBeUndefined()
    }))

  it('deletes every plant named with its event, or none when one is missing unless allowed', () =>
    withStore(async (store) => {
      await store.plants.createMany([1n, 2n, 3n].map((id) => ({ plant: { id, name: `p${id}` } })))
      const event = (plant: NewPlant, at: Date) => plantEvent('plant.deleted', plant, at)
      expect(await store.plants.removeMany([2n, 9n, 1n], { allowMissing: false, event })).toEqual({
        outcome: 'missing',
        id: 9n,
      })
      expect(await store.plants.get(2n)).toBeDefined()
      expect(await store.plants.removeMany([2n, 9n, 1n], { allowMissing: true, event })).toEqual({
        outcome: 'deleted',
        ids: [2n, 1n],
      })
      expect(await store.plants.get(1n)).toBeUndefined()
      expect(await store.plants.get(3n)).toBeDefined()
      expect(await eventTypes(store)).toEqual(['plant.deleted 2', 'plant.deleted 1'])
    }))

  it('keeps a batch apart from the single writes that share its transaction', () =>
    withStore(async (store) => {
      await store.plants.create({ id: 10n, name: 'single' })
      // Sent in one turn, so that SQLite commits them in one group.
      const [before, batch, after] = await Promise.all([
        store.plants.create({ id: 13n, name: 'before' }),
        store.plants.createMany([withEvent({ id: 11n, name: 'b' }), withEvent({ id: 10n, name: 'taken' })]),
        store.plants.create({ id: 12n, name: 'after' }),
      ])
      expect([before, batch, after]).toEqual(['created', { outcome: 'exists', index: 1 }, 'created'])
      expect(await store.plants.get(11n)).toBeUndefined()
      expect(await store.plants.get(12n)).toBeDefined()
    }))
})
