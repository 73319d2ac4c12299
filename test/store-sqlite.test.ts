import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createPlant } from '../src/plants/service.js'
import { openSqlite, type SqliteStore } from '../src/store/sqlite/index.js'
import type { SqlitePlantStore } from '../src/store/sqlite/plants.js'
import { createWebhook } from '../src/webhooks/service.js'
import { tempDir } from './helpers/stores.js'

describe('SQLite store', () => {
  let store: SqliteStore
  afterEach(() => store?.close())

  it('serves from WAL mode with synchronous=FULL', () => {
    store = openSqlite({ path: join(tempDir(), 'p.db') })
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal')
    // 2 is FULL: every commit is fsynced before a create is acknowledged.
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2)
  })

  it('group-commits concurrent creates into one transaction, failing only the duplicate', async () => {
    store = openSqlite({ path: ':memory:' })
    const commits: number[] = []
    const plants = store.plants as unknown as { commit(): void }
    const original = plants.commit.bind(plants)
    plants.commit = () => {
      commits.push(Date.now())
      original()
    }
    const outcomes = await Promise.all([
      store.plants.create({ id: 1n, name: 'a' }),
      store.plants.create({ id: 2n, name: 'b' }),
      store.plants.create({ id: 1n, name: 'dup' }),
      store.plants.create({ id: 3n, name: 'c' }),
    ])
    expect(outcomes).toEqual(['created', 'created', 'exists', 'created'])
    expect(commits).toHaveLength(1)
    expect((await store.plants.get(1n))?.name).toBe('a')
  })

  it('fails every request of a batch whose commit fails, and keeps none of its rows', async () => {
    store = openSqlite({ path: ':memory:' })
    const plants = store.plants as SqlitePlantStore & { commit(): void }
    plants.commit = () => {
      throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })
    }
    const results = await Promise.allSettled([
      store.plants.create({ id: 10n, name: 'a' }),
      store.plants.create({ id: 11n, name: 'b' }),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(await store.plants.get(10n)).toBeUndefined()
    expect(await store.plants.get(11n)).toBeUndefined()
    expect(store.db.inTransaction).toBe(false)
  })

  it('writes a plant.created event with the plant in its transaction, and none for a duplicate', async () => {
    store = openSqlite({ path: ':memory:' })
    await createPlant(store.plants, { id: 9223372036854775807n, name: 'big', tag: 't' })
    await expect(createPlant(store.plants, { id: 9223372036854775807n, name: 'again' })).rejects.toThrow(
      /exists/,
    )
    const events = await store.events.listSince(0, 10)
    expect(events).toHaveLength(1)
    const envelope = events[0]?.payload ?? ''
    expect(envelope).toContain('"data":{"id":9223372036854775807,"name":"big","tag":"t"}')
    expect(JSON.parse(envelope)).toMatchObject({ type: 'plant.created', timestamp: expect.any(String) })
  })

  it('lets queue transactions wait for a held write lock without blocking the thread', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const dispatcherSide = openSqlite({ path, busyTimeoutMs: 0 })
    try {
      await createPlant(store.plants, { id: 1n, name: 'a' })
      await createWebhook(store.webhooks, {
        url: 'https://r.example/',
        events: ['plant.created'],
        description: null,
      })
      await createPlant(store.plants, { id: 2n, name: 'b' })
      store.db.exec('BEGIN IMMEDIATE')
      const fanned = dispatcherSide.webhooks.fanOut(100, new Date())
      // The event loop still turns while the lock is held: the commit below runs before fanOut ends.
      await new Promise((resolve) => setTimeout(resolve, 30))
      store.db.exec('COMMIT')
      expect(await fanned).toBe(2)
    } finally {
      await dispatcherSide.close()
    }
  })

  it('migrates once, however many times it is opened', async () => {
    const path = join(tempDir(), 'p.db')
    openSqlite({ path }).db.close()
    store = openSqlite({ path })
    expect(store.db.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBeGreaterThan(0)
    const versions = store.db.prepare('SELECT version FROM schema_migrations').pluck().all()
    expect(new Set(versions).size).toBe(versions.length)
  })
})
