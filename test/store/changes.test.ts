import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type PlantEventType, plantEvent, plantJson } from '../../src/plants/events.js'
import type { Plant } from '../../src/plants/model.js'
import { FEED_SCAN_SEQS } from '../../src/store/change-row.js'
import { parseDatabaseUrl } from '../../src/store/open.js'
import { OTHER_COMMITS_POLL_MS } from '../../src/store/sqlite/events.js'
import { openSqlite } from '../../src/store/sqlite/index.js'
import type { Actor, ChangeRecord, OutboxEvent, Store } from '../../src/store/types.js'
import { sendTestEvent } from '../../src/webhooks/service.js'
import { openFresh, sqliteKind, storeKinds } from '../helpers/stores.js'
import { subscriptionRecord } from '../helpers/webhooks.js'

const token: Actor = { tokenId: 'tok_reader1' }
const jwt: Actor = { iss: 'https://issuer.example/', sub: 'user-7' }

/** A plant's change event with its facts, as the service builds it. */
function change(
  type: PlantEventType,
  plant: Plant,
  at: Date,
  facts: { actor?: Actor; requestId?: string | null; before?: Plant } = {},
): OutboxEvent {
  return {
    ...plantEvent(type, plant, at),
    change: {
      plantId: plant.id,
      actor: facts.actor ?? token,
      requestId: facts.requestId === undefined ? 'req-1' : facts.requestId,
      before: facts.before === undefined ? null : plantJson(facts.before),
    },
  }
}

describe.each(storeKinds)('the change feed and history on $name', (kind) => {
  let store: Store
  beforeEach(async () => {
    store = (await openFresh(kind)).store
  })
  afterEach(() => store.close())

  const create = (plant: Plant, facts?: Parameters<typeof change>[3]) =>
    store.plants.create(plant, { event: (at) => change('plant.created', plant, at, facts) })
  const rename = (id: bigint, name: string, facts?: Parameters<typeof change>[3]) =>
    store.plants.update(
      id,
      { name },
      { event: (plant, at, before) => change('plant.updated', plant, at, { ...facts, before }) },
    )
  const remove = (id: bigint, facts?: Parameters<typeof change>[3]) =>
    store.plants.remove(id, { event: (plant, at) => change('plant.deleted', plant, at, facts) })
  const all = async (afterSeq = 0) => (await store.events.changes({ afterSeq, limit: 1000 })).changes

  it('records who made each change, in which request, and the plant before and after, with exact ids', async () => {
    const id = 9223372036854775807n
    await create({ id, name: 'first', tag: 'a' })
    // The store hands an update's event builder the plant as it was, read in the write's transaction.
    const befores: Array<Plant | undefined> = []
    const result = await store.plants.update(
      id,
      { name: 'second', tag: null },
      {
        event: (plant, at, before) => {
          befores.push(before)
          return change('plant.updated', plant, at, { actor: jwt, requestId: 'req-2', before })
        },
      },
    )
    expect(result.outcome).toBe('done')
    expect(befores).toEqual([{ id, name: 'first', tag: 'a' }])
    await remove(id, { requestId: 'req-3' })

    const changes = await all()
    expect(changes).toEqual([
      {
        seq: expect.any(Number),
        type: 'plant.created',
        time: expect.any(Date),
        actor: token,
        requestId: 'req-1',
        before: null,
        after: '{"id":9223372036854775807,"name":"first","tag":"a"}',
      },
      {
        seq: expect.any(Number),
        type: 'plant.updated',
        time: expect.any(Date),
        actor: jwt,
        requestId: 'req-2',
        before: '{"id":9223372036854775807,"name":"first","tag":"a"}',
        after: '{"id":9223372036854775807,"name":"second"}',
      },
      {
        seq: expect.any(Number),
        type: 'plant.deleted',
        time: expect.any(Date),
        actor: token,
        requestId: 'req-3',
        before: '{"id":9223372036854775807,"name":"second"}',
        after: null,
      },
    ])
    const [first, second, third] = changes as [ChangeRecord, ChangeRecord, ChangeRecord]
    expect(first.seq).toBeLessThan(second.seq)
    expect(second.seq).toBeLessThan(third.seq)
    expect(first.time.getTime()).toBeLessThanOrEqual(second.time.getTime())
    // The time is the event's own.
    const [event] = await store.events.listSince(0, 1)
    expect(first.time).toEqual(event?.occurredAt)
  })

  it('records one change per plant of a batch create, a batch delete and an import', async () => {
    const ids = [9007199254740993n, -9223372036854775808n, 3n]
    expect(
      await store.plants.createMany(
        ids.map((id) => {
          const plant = { id, name: `n${id}` }
          return {
            plant,
            event: (at: Date) => change('plant.created', plant, at, { requestId: 'req-batch' }),
          }
        }),
      ),
    ).toEqual({ outcome: 'created' })
    expect(
      await store.plants.removeMany([ids[0] as bigint, 99n, ids[1] as bigint], {
        allowMissing: true,
        event: (plant, at) => change('plant.deleted', plant, at, { requestId: 'req-gone' }),
      }),
    ).toEqual({ outcome: 'deleted', ids: [ids[0], ids[1]] })
    const imported = { id: 18014398509481985n, name: 'imported' }
    const cli: Actor = { cli: 'import' }
    expect(
      await store.plants.importBatch([
        {
          plant: imported,
          event: (at) => change('plant.created', imported, at, { actor: cli, requestId: null }),
        },
        // Already there: nothing written, no change recorded.
        {
          plant: { id: 3n, name: 'n3' },
          event: (at) => change('plant.created', { id: 3n, name: 'n3' }, at, { actor: cli, requestId: null }),
        },
      ]),
    ).toEqual(['created', 'unchanged'])

    const shown = (await all()).map((c) => [c.type, c.actor, c.requestId, c.before, c.after])
    expect(shown).toEqual([
      ['plant.created', token, 'req-batch', null, '{"id":9007199254740993,"name":"n9007199254740993"}'],
      [
        'plant.created',
        token,
        'req-batch',
        null,
        '{"id":-9223372036854775808,"name":"n-9223372036854775808"}',
      ],
      ['plant.created', token, 'req-batch', null, '{"id":3,"name":"n3"}'],
      ['plant.deleted', token, 'req-gone', '{"id":9007199254740993,"name":"n9007199254740993"}', null],
      [
        'plant.deleted',
        token,
        'req-gone',
        '{"id":-9223372036854775808,"name":"n-9223372036854775808"}',
        null,
      ],
      ['plant.created', cli, null, null, '{"id":18014398509481985,"name":"imported"}'],
    ])
    // Each is in its plant's history, found by the exact id.
    expect((await store.events.history(-9223372036854775808n, 10)).map((c) => c.type)).toEqual([
      'plant.deleted',
      'plant.created',
    ])
    expect((await store.events.history(18014398509481985n, 10)).map((c) => c.actor)).toEqual([cli])
    expect(await store.events.history(18014398509481984n, 10)).toEqual([])
  })

  it('pages the feed in seq order, resuming after the last seq it saw, and never shows a test message', async () => {
    expect(await store.events.changes({ afterSeq: 0, limit: 10 })).toEqual({
      changes: [],
      lastSeq: 0,
      reachedEnd: true,
    })
    await store.webhooks.insert(subscriptionRecord('wh_1', new Date(0), ['plant.created', 'plant.deleted']))
    for (const id of [1n, 2n, 3n]) await create({ id, name: `p${id}` })
    await remove(2n)
    await sendTestEvent(store.webhooks, 'wh_1')
    const seqs = (await all()).map((c) => c.seq)
    expect(seqs).toHaveLength(4)
    // The test message took a seq after the last change.
    const [newest] = (await store.events.listSince(seqs[3] as number, 10)).map((e) => e.seq)
    expect(newest).toBeGreaterThan(seqs[3] as number)

    // A full page resumes after its last change; the last, short page after everything the read saw.
    const first = await store.events.changes({ afterSeq: 0, limit: 2 })
    expect(first.changes.map((c) => c.seq)).toEqual(seqs.slice(0, 2))
    expect(first.lastSeq).toBe(seqs[1])
    const second = await store.events.changes({ afterSeq: first.lastSeq, limit: 2 })
    expect(second.changes.map((c) => c.seq)).toEqual(seqs.slice(2, 4))
    expect(second.lastSeq).toBe(seqs[3])
    const third = await store.events.changes({ afterSeq: second.lastSeq, limit: 2 })
    expect(third).toEqual({ changes: [], lastSeq: newest, reachedEnd: true })
    // A read of no change says where the feed stands.
    expect(await store.events.changes({ afterSeq: 0, limit: 0 })).toEqual({
      changes: [],
      lastSeq: newest,
      reachedEnd: true,
    })
    // Never below where the read started.
    expect(await store.events.changes({ afterSeq: 1_000_000, limit: 2 })).toEqual({
      changes: [],
      lastSeq: 1_000_000,
      reachedEnd: true,
    })

    // Only the types asked; a short page still moves on past the events it passed over.
    const deleted = await store.events.changes({ afterSeq: 0, limit: 10, types: ['plant.deleted'] })
    expect(deleted.changes.map((c) => [c.seq, c.type])).toEqual([[seqs[3], 'plant.deleted']])
    expect(deleted.lastSeq).toBe(newest)
    const twoTypes = await store.events.changes({
      afterSeq: 0,
      limit: 10,
      types: ['plant.updated', 'plant.created'],
    })
    expect(twoTypes.changes.map((c) => c.seq)).toEqual(seqs.slice(0, 3))
    const created = await store.events.changes({ afterSeq: 0, limit: 1, types: ['plant.created'] })
    expect(created).toEqual({
      changes: [expect.objectContaining({ seq: seqs[0] })],
      lastSeq: seqs[0],
      reachedEnd: false,
    })
    // A test message is no change, even when asked for by its type.
    expect(await store.events.changes({ afterSeq: 0, limit: 10, types: ['webhook.test'] })).toEqual({
      changes: [],
      lastSeq: newest,
      reachedEnd: true,
    })
  })

  it('looks at most FEED_SCAN_SEQS seqs past afterSeq in one read, and says where it stopped', async () => {
    const created = FEED_SCAN_SEQS + 50
    for (let from = 1; from <= created; from += 1000) {
      const items = Array.from({ length: Math.min(1000, created - from + 1) }, (_, i) => {
        const plant = { id: BigInt(from + i), name: 'many' }
        return { plant, event: (at: Date) => change('plant.created', plant, at) }
      })
      expect(await store.plants.createMany(items)).toEqual({ outcome: 'created' })
    }
    await remove(7n)
    const deletes = { afterSeq: 0, limit: 10, types: ['plant.deleted'] }
    const first = await store.events.changes(deletes)
    expect(first.changes).toEqual([])
    expect(first.reachedEnd).toBe(false)
    expect(first.lastSeq).toBe(FEED_SCAN_SEQS)
    const second = await store.events.changes({ ...deletes, afterSeq: first.lastSeq })
    expect(second.changes.map((c) => c.type)).toEqual(['plant.deleted'])
    expect(second.reachedEnd).toBe(true)
    // Asking where the feed stands looks at no change, however far it is.
    expect(await store.events.changes({ afterSeq: 0, limit: 0 })).toEqual({
      changes: [],
      lastSeq: second.lastSeq,
      reachedEnd: true,
    })
  })

  it("reads a plant's history newest first, a page before a seq at a time, after the plant is deleted too", async () => {
    const id = 9007199254740993n
    await create({ id, name: 'v1' })
    await create({ id: 5n, name: 'other' })
    for (const name of ['v2', 'v3', 'v4']) await rename(id, name)
    await remove(id)
    await rename(5n, 'other2')

    const history = await store.events.history(id, 10)
    expect(history.map((c) => [c.type, c.before, c.after])).toEqual([
      ['plant.deleted', '{"id":9007199254740993,"name":"v4"}', null],
      ['plant.updated', '{"id":9007199254740993,"name":"v3"}', '{"id":9007199254740993,"name":"v4"}'],
      ['plant.updated', '{"id":9007199254740993,"name":"v2"}', '{"id":9007199254740993,"name":"v3"}'],
      ['plant.updated', '{"id":9007199254740993,"name":"v1"}', '{"id":9007199254740993,"name":"v2"}'],
      ['plant.created', null, '{"id":9007199254740993,"name":"v1"}'],
    ])
    const seqs = history.map((c) => c.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a))

    const page = await store.events.history(id, 2)
    expect(page.map((c) => c.seq)).toEqual(seqs.slice(0, 2))
    const next = await store.events.history(id, 2, page[1]?.seq)
    expect(next.map((c) => c.seq)).toEqual(seqs.slice(2, 4))
    const last = await store.events.history(id, 2, next[1]?.seq)
    expect(last.map((c) => c.seq)).toEqual(seqs.slice(4))
    expect(await store.events.history(id, 2, last[0]?.seq)).toEqual([])

    // A plant made again under the same id continues the same history.
    await create({ id, name: 'again' })
    expect((await store.events.history(id, 1))[0]?.after).toBe('{"id":9007199254740993,"name":"again"}')
    expect((await store.events.history(5n, 10)).map((c) => c.type)).toEqual([
      'plant.updated',
      'plant.created',
    ])
  })

  it('moves the retention horizon to the highest seq the sweep deleted', async () => {
    expect(await store.events.retentionHorizon()).toBe(0)
    for (const id of [1n, 2n, 3n]) await create({ id, name: `p${id}` })
    const seqs = (await all()).map((c) => c.seq)
    const counts = await store.maintenance.sweep({
      now: new Date(),
      eventsBefore: new Date(Date.now() + 60_000),
      tokensBefore: new Date(0),
    })
    expect(counts.events).toBe(3)
    expect(await store.events.retentionHorizon()).toBe(seqs[2])
    expect(await all()).toEqual([])
    // A sweep that deletes nothing leaves it where it is.
    await store.maintenance.sweep({ now: new Date(), eventsBefore: new Date(0), tokensBefore: new Date(0) })
    expect(await store.events.retentionHorizon()).toBe(seqs[2])
    // The feed goes on above it.
    await create({ id: 4n, name: 'p4' })
    const after = await store.events.changes({ afterSeq: seqs[2] as number, limit: 10 })
    expect(after.changes.map((c) => c.after)).toEqual(['{"id":4,"name":"p4"}'])
  })

  it('rings its watchers after a commit that wrote changes, until they stop watching', async () => {
    const rung = vi.fn()
    const stop = store.events.watchChanges(rung)
    await create({ id: 1n, name: 'a' })
    await vi.waitFor(() => expect(rung).toHaveBeenCalled())
    for (const write of [
      () => rename(1n, 'b'),
      () => remove(1n),
      () =>
        store.plants.createMany([
          { plant: { id: 2n, name: 'c' }, event: (at) => change('plant.created', { id: 2n, name: 'c' }, at) },
        ]),
      () =>
        store.plants.importBatch([
          { plant: { id: 3n, name: 'd' }, event: (at) => change('plant.created', { id: 3n, name: 'd' }, at) },
        ]),
    ]) {
      rung.mockClear()
      await write()
      await vi.waitFor(() => expect(rung).toHaveBeenCalled())
    }
    stop()
    rung.mockClear()
    await create({ id: 4n, name: 'e' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(rung).not.toHaveBeenCalled()
  })
})

describe('the SQLite change feed', () => {
  let store: Store
  let url: string
  beforeEach(async () => {
    ;({ store, url } = await openFresh(sqliteKind))
  })
  afterEach(() => store.close())

  it("rings its watchers after another process's commit on the same file, looking only while anyone watches", async () => {
    const location = parseDatabaseUrl(url)
    if (location?.kind !== 'sqlite') throw new Error(url)
    const other = openSqlite({ path: location.path })
    try {
      const rung = vi.fn()
      const stop = store.events.watchChanges(rung)
      const plant = { id: 1n, name: 'a' }
      await other.plants.create(plant, { event: (at) => change('plant.created', plant, at) })
      await vi.waitFor(() => expect(rung).toHaveBeenCalled(), { timeout: 5 * OTHER_COMMITS_POLL_MS })
      const [seen] = (await store.events.changes({ afterSeq: 0, limit: 10 })).changes
      expect(seen?.after).toBe('{"id":1,"name":"a"}')
      // A commit that wrote no event (a token) moves nothing a watcher wants.
      rung.mockClear()
      await other.tokens.insert({
        id: 'tok_other',
        name: 'other',
        secretHash: '0'.repeat(64),
        scopes: ['plants:read'],
        createdAt: new Date(),
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        rateLimit: null,
      })
      await new Promise((resolve) => setTimeout(resolve, 3 * OTHER_COMMITS_POLL_MS))
      expect(rung).not.toHaveBeenCalled()
      // Nobody watching: nothing looks.
      stop()
      const second = { id: 2n, name: 'b' }
      await other.plants.create(second, { event: (at) => change('plant.created', second, at) })
      await new Promise((resolve) => setTimeout(resolve, 3 * OTHER_COMMITS_POLL_MS))
      expect(rung).not.toHaveBeenCalled()
    } finally {
      await other.close()
    }
  })

  it('stops looking for other commits once the store is closed under its watchers', async () => {
    const started = vi.spyOn(globalThis, 'setInterval')
    const cleared = vi.spyOn(globalThis, 'clearInterval')
    try {
      const rung = vi.fn()
      store.events.watchChanges(rung)
      expect(started).toHaveBeenCalledTimes(1)
      const poll = started.mock.results[0]?.value
      await store.close()
      // The next look finds the store closed and ends the poll, though its watcher never stopped.
      await vi.waitFor(() => expect(cleared).toHaveBeenCalledWith(poll), {
        timeout: 5 * OTHER_COMMITS_POLL_MS,
      })
      expect(rung).not.toHaveBeenCalled()
    } finally {
      started.mockRestore()
      cleared.mockRestore()
    }
  })

  it('tells every watcher, and settles the write, when one watcher throws', async () => {
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => {})
    try {
      store.events.watchChanges(() => {
        throw new Error('a broken watcher')
      })
      const rung = vi.fn()
      store.events.watchChanges(rung)
      const plant = { id: 1n, name: 'a' }
      expect(await store.plants.create(plant, { event: (at) => change('plant.created', plant, at) })).toBe(
        'created',
      )
      expect(rung).toHaveBeenCalledTimes(1)
      expect(warned).toHaveBeenCalledWith(new Error('a broken watcher'))
      // Nothing is left waiting: the store still closes.
      await store.close()
    } finally {
      warned.mockRestore()
    }
  })

  it('rings its watchers once the commit is durable, and not for a write that changed nothing', async () => {
    const rung = vi.fn()
    store.events.watchChanges(rung)
    const plant = { id: 1n, name: 'a' }
    const created = store.plants.create(plant, { event: (at) => change('plant.created', plant, at) })
    expect(rung).not.toHaveBeenCalled()
    expect(await created).toBe('created')
    // By the time the create resolves, its watchers have been told.
    expect(rung).toHaveBeenCalledTimes(1)
    rung.mockClear()
    expect(await store.plants.create(plant, { event: (at) => change('plant.created', plant, at) })).toBe(
      'exists',
    )
    await store.plants.update(1n, { name: 'a' }, { event: (p, at) => change('plant.updated', p, at) })
    expect(rung).not.toHaveBeenCalled()
  })
})
