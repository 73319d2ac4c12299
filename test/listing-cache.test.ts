import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqlite, type SqliteStore } from '../src/store/sqlite/index.js'
import { ListingCache } from '../src/store/sqlite/listing-cache.js'
import type { JsonPage } from '../src/store/types.js'
import { tempDir } from './helpers/stores.js'

/** A reader that counts how often the cache asked for the page. */
function counted(json: string) {
  const reader = {
    reads: 0,
    read: (): JsonPage => {
      reader.reads++
      return { json }
    },
  }
  return reader
}

describe('ListingCache', () => {
  const open: Database.Database[] = []
  afterEach(() => {
    for (const db of open.splice(0)) db.close()
  })
  const database = (path: string) => {
    const db = new Database(path)
    open.push(db)
    return db
  }
  const withTable = () => {
    const path = join(tempDir(), 'c.db')
    const db = database(path)
    db.pragma('journal_mode = WAL')
    db.exec('CREATE TABLE t (x INTEGER)')
    return { db, path }
  }

  it('reads a page once while the database is unchanged, and hands out the same page', () => {
    const { db } = withTable()
    const cache = new ListingCache(db)
    const first = counted('[1]')
    const page = cache.page('a', first.read)
    expect(cache.page('a', first.read)).toBe(page)
    expect(cache.page('a', first.read)).toBe(page)
    expect(first.reads).toBe(1)
    // Another key is another page.
    const other = counted('[2]')
    expect(cache.page('b', other.read).json).toBe('[2]')
    expect(other.reads).toBe(1)
  })

  it('reads again after a write on its own connection', () => {
    const { db } = withTable()
    const cache = new ListingCache(db)
    const reader = counted('[]')
    cache.page('a', reader.read)
    db.prepare('INSERT INTO t VALUES (1)').run()
    cache.page('a', reader.read)
    expect(reader.reads).toBe(2)
    // A write in a transaction that is rolled back still counts: reading again is never wrong.
    const undone = db.transaction(() => {
      db.prepare('INSERT INTO t VALUES (2)').run()
      throw new Error('undo')
    })
    expect(() => undone()).toThrow('undo')
    cache.page('a', reader.read)
    expect(reader.reads).toBe(3)
  })

  it('reads again after a commit by another connection to the same file', () => {
    const { db, path } = withTable()
    const cache = new ListingCache(db)
    const reader = counted('[]')
    cache.page('a', reader.read)
    database(path).prepare('INSERT INTO t VALUES (1)').run()
    cache.page('a', reader.read)
    cache.page('a', reader.read)
    expect(reader.reads).toBe(2)
  })

  it('keeps at most its number of pages, dropping the oldest', () => {
    const { db } = withTable()
    const cache = new ListingCache(db, 2, 1000)
    const readers = ['a', 'b', 'c'].map((key) => ({ key, reader: counted(`["${key}"]`) }))
    for (const { key, reader } of readers) cache.page(key, reader.read)
    for (const { key, reader } of readers.slice().reverse()) cache.page(key, reader.read)
    // c and b were kept; a was dropped for c, read again, and then b was dropped for it.
    expect(readers.map(({ reader }) => reader.reads)).toEqual([2, 1, 1])
  })

  it('keeps at most its number of characters, and never a page larger than that', () => {
    const { db } = withTable()
    const cache = new ListingCache(db, 16, 10)
    const big = counted('x'.repeat(11))
    cache.page('big', big.read)
    cache.page('big', big.read)
    expect(big.reads).toBe(2)
    const six = counted('x'.repeat(6))
    const five = counted('x'.repeat(5))
    cache.page('six', six.read)
    cache.page('five', five.read)
    cache.page('five', five.read)
    // Six and five characters do not fit in ten: five replaced six, and then six replaced five.
    cache.page('six', six.read)
    expect([six.reads, five.reads]).toEqual([2, 1])
    cache.page('five', five.read)
    expect([six.reads, five.reads]).toEqual([2, 2])
  })
})

describe('SQLite listing pages', () => {
  let store: SqliteStore | undefined
  afterEach(async () => {
    await store?.close()
    store = undefined
  })

  const ids = (page: JsonPage) => (JSON.parse(page.json) as Array<{ id: number }>).map((p) => p.id)

  it('show every change, whichever connection made it', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const plants = store.plants
    const first = { limit: 100 }
    expect(await plants.create({ id: 1n, name: 'a', tag: 'x' })).toBe('created')
    expect(ids(await plants.listJson(first))).toEqual([1])
    expect(ids(await plants.listJson(first))).toEqual([1])

    // A create commits on the batch writer's own connection.
    expect(await plants.create({ id: 2n, name: 'b' })).toBe('created')
    expect(ids(await plants.listJson(first))).toEqual([1, 2])
    expect(ids(await plants.listJson({ limit: 100, tag: 'x' }))).toEqual([1])

    // A change and a delete write on the store's own connection.
    expect((await plants.update(2n, { tag: 'x' })).outcome).toBe('done')
    expect(ids(await plants.listJson({ limit: 100, tag: 'x' }))).toEqual([1, 2])
    expect((await plants.remove(1n)).outcome).toBe('done')
    expect(ids(await plants.listJson(first))).toEqual([2])
    expect(ids(await plants.listJson({ limit: 100, tag: 'x' }))).toEqual([2])

    // Another process (here, another connection) writes the file.
    const other = new Database(path)
    other.prepare("INSERT INTO plants (id, name, created_at, updated_at) VALUES (3, 'c', 0, 0)").run()
    other.close()
    expect(ids(await plants.listJson(first))).toEqual([2, 3])

    // Pages with a cursor and a limit are pages of their own.
    const one = await plants.listJson({ limit: 1 })
    expect([ids(one), one.next]).toEqual([[2], 2n])
    expect(ids(await plants.listJson({ limit: 1, after: 2n }))).toEqual([3])
  })

  it('show creates on sqlite::memory:, where they commit on the same connection', async () => {
    store = openSqlite({ path: ':memory:' })
    expect(ids(await store.plants.listJson({ limit: 10 }))).toEqual([])
    expect(await store.plants.create({ id: 7n, name: 'a' })).toBe('created')
    expect(ids(await store.plants.listJson({ limit: 10 }))).toEqual([7])
  })
})
