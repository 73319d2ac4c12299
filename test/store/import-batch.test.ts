import { describe, expect, it, vi } from 'vitest'
import { plantEvent } from '../../src/plants/events.js'
import { deletePlant } from '../../src/plants/service.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('plant store import and scan on $name', (kind) => {
  it('inserts new plants, skips identical ones and reports a different one as a conflict', async () => {
    const { store } = await openFresh(kind)
    try {
      const first = await store.plants.importBatch([
        { plant: { id: 1n, name: 'a' } },
        { plant: { id: 2n, name: 'b', tag: 't' } },
        { plant: { id: 1n, name: 'a' } },
      ])
      expect(first).toEqual(['created', 'created', 'unchanged'])
      const again = await store.plants.importBatch([
        { plant: { id: 2n, name: 'b', tag: 't' } },
        { plant: { id: 2n, name: 'b' } },
        { plant: { id: 1n, name: 'other' } },
      ])
      expect(again).toEqual(['unchanged', 'conflict', 'conflict'])
      expect(await store.plants.get(1n)).toEqual({ id: 1n, name: 'a' })
    } finally {
      await store.close()
    }
  })

  it('dates the event of an imported plant when its batch is written, not when its line was read', async () => {
    const { store } = await openFresh(kind)
    try {
      await store.plants.create({ id: 1n, name: 'first' })
      const plant = { id: 1n, name: 'second' }
      const read = Date.now()
      vi.useFakeTimers({ toFake: ['Date'], now: read })
      try {
        // The line is read while the plant exists; another client's delete commits before its batch.
        const item = { plant, event: (at: Date) => plantEvent('plant.created', plant, at) }
        vi.setSystemTime(read + 5)
        await deletePlant(store.plants, 1n)
        vi.setSystemTime(read + 10)
        expect(await store.plants.importBatch([item])).toEqual(['created'])
      } finally {
        vi.useRealTimers()
      }
      const events = await store.events.listSince(0, 10)
      expect(events.map((e) => [e.type, e.occurredAt.getTime()])).toEqual([
        ['plant.deleted', read + 5],
        ['plant.created', read + 10],
      ])
    } finally {
      await store.close()
    }
  })

  it('creates the first of the lines that share an id, and writes the events of those created in line order', async () => {
    const { store } = await openFresh(kind)
    try {
      const item = (id: bigint, name: string) => {
        const plant = { id, name }
        return { plant, event: (at: Date) => plantEvent('plant.created', plant, at) }
      }
      await store.plants.importBatch([item(2n, 'stored')])
      const outcomes = await store.plants.importBatch([
        item(5n, 'e'),
        item(2n, 'stored'),
        item(5n, 'other'),
        item(1n, 'a'),
        item(5n, 'e'),
        item(2n, 'changed'),
      ])
      expect(outcomes).toEqual(['created', 'unchanged', 'conflict', 'created', 'unchanged', 'conflict'])
      expect(await store.plants.get(5n)).toEqual({ id: 5n, name: 'e' })
      const events = await store.events.listSince(0, 10)
      expect(events.map((e) => JSON.parse(e.payload).data)).toEqual([
        { id: 2, name: 'stored' },
        { id: 5, name: 'e' },
        { id: 1, name: 'a' },
      ])
    } finally {
      await store.close()
    }
  })
})
