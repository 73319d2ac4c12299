import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { foldName } from '../../src/plants/fold.js'
import type { NewPlant } from '../../src/plants/model.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { PostgresStore } from '../../src/store/postgres/index.js'
import * as postgresMigrations from '../../src/store/postgres/migrate.js'
import type { SqliteStore } from '../../src/store/sqlite/index.js'
import * as sqliteMigrations from '../../src/store/sqlite/migrate.js'
import type { ListedPlant, ListQuery, PlantOrder, SortField, Store } from '../../src/store/types.js'
import { admin } from '../helpers/postgres.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

/** Compares by code point, as both stores order names (JS's `<` compares UTF-16 code units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number)
  const y = [...b].map((c) => c.codePointAt(0) as number)
  for (let i = 0; i < Math.min(x.length, y.length); i++)
    if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return x.length - y.length
}

const ORDERS: PlantOrder[] = (['id', 'name', 'createdAt', 'updatedAt'] as SortField[]).flatMap((field) => [
  { field, descending: false },
  { field, descending: true },
])

describe.each(storeKinds)('finding plants on $name', (kind) => {
  let store: Store
  beforeEach(async () => {
    store = (await openFresh(kind)).store
  })
  afterEach(() => store.close())

  const names = async (query: Omit<ListQuery, 'limit'> & { limit?: number }) =>
    (await store.plants.list({ limit: 100, ...query })).map(({ plant }) => plant.name)
  const createAll = async (plants: NewPlant[]) => {
    for (const plant of plants) expect(await store.plants.create(plant)).toBe('created')
  }

  /** Every page of the query's order, `size` at a time, each after the last plant of the one before. */
  async function pageThrough(
    query: Omit<ListQuery, 'limit' | 'after'>,
    size: number,
    between?: () => Promise<void>,
  ) {
    const seen: ListedPlant[] = []
    let after: ListQuery['after']
    for (;;) {
      const page = await store.plants.list({ ...query, limit: size, ...(after ? { after } : {}) })
      seen.push(...page)
      const last = page[page.length - 1]
      if (page.length < size || last === undefined) return seen
      after = last.key === undefined ? { id: last.plant.id } : { id: last.plant.id, key: last.key }
      await between?.()
    }
  }

  it('finds a piece of a name whatever its case, Unicode letters too, with accents kept', async () => {
    await createAll([
      { id: 1n, name: 'Ölbaum' },
      { id: 2n, name: 'OLBAUM' },
      { id: 3n, name: 'ΣΊΓΜΑ' },
      { id: 4n, name: 'Kleiner ΟΔΟΣ' },
      { id: 5n, name: 'Fern' },
    ])
    expect(await names({ text: 'ölb' })).toEqual(['Ölbaum'])
    expect(await names({ text: 'ÖLB' })).toEqual(['Ölbaum'])
    expect(await names({ text: 'olb' })).toEqual(['OLBAUM'])
    expect(await names({ text: 'σίγμα' })).toEqual(['ΣΊΓΜΑ'])
    // Typed with a combining diaeresis, the text is the same as precomposed.
    expect(await names({ text: 'o\u0308lbau' })).toEqual(['Ölbaum'])
    // A final sigma folds to σ, in the name and in the text.
    expect(await names({ text: 'οδος' })).toEqual(['Kleiner ΟΔΟΣ'])
    expect(await names({ text: 'er' })).toEqual(['Kleiner ΟΔΟΣ', 'Fern'])
    expect(await names({ text: 'BAUM' })).toEqual(['Ölbaum', 'OLBAUM'])
    expect(await names({ text: 'baume' })).toEqual([])
    // A renamed plant is found by its new name only; a deleted one no more.
    await store.plants.update(5n, { name: 'Farn' })
    expect(await names({ text: 'fern' })).toEqual([])
    expect(await names({ text: 'farn' })).toEqual(['Farn'])
    await store.plants.update(5n, { tag: 'x' })
    expect(await names({ text: 'farn' })).toEqual(['Farn'])
    await store.plants.remove(1n)
    expect(await names({ text: 'ölb' })).toEqual([])
    expect(await store.plants.count({ text: 'baum' })).toBe(1)
  })

  it('takes %, _, \\ and " in a text as the characters they are', async () => {
    await createAll([
      { id: 1n, name: '100% pure' },
      { id: 2n, name: '1000 pure' },
      { id: 3n, name: 'a_b_c' },
      { id: 4n, name: 'axbxc' },
      { id: 5n, name: 'back\\slash' },
      { id: 6n, name: 'backslash' },
      { id: 7n, name: 'say "hi" now' },
      { id: 8n, name: 'say hi now' },
    ])
    expect(await names({ text: '0% p' })).toEqual(['100% pure'])
    expect(await names({ text: '%' })).toEqual(['100% pure'])
    expect(await names({ text: '_' })).toEqual(['a_b_c'])
    expect(await names({ text: 'a_b' })).toEqual(['a_b_c'])
    expect(await names({ text: '\\' })).toEqual(['back\\slash'])
    expect(await names({ text: 'k\\s' })).toEqual(['back\\slash'])
    expect(await names({ text: '"hi"' })).toEqual(['say "hi" now'])
    expect(await names({ text: '"' })).toEqual(['say "hi" now'])
    expect(await names({ text: 'y "h' })).toEqual(['say "hi" now'])
    expect(await names({ text: 'hi n' })).toEqual(['say hi now'])
    expect(await store.plants.count({ text: '%' })).toBe(1)
    expect(await store.plants.count({ text: '_b_' })).toBe(1)
  })

  it('finds texts of one and two code points, which hold no trigram, and counts code points not units', async () => {
    await createAll([
      { id: 1n, name: 'Ölbaum' },
      { id: 2n, name: 'ab' },
      { id: 3n, name: 'x🌿y' },
      { id: 4n, name: '🌿🌱 mix' },
      { id: 5n, name: 'b' },
    ])
    expect(await names({ text: 'ö' })).toEqual(['Ölbaum'])
    expect(await names({ text: 'B' })).toEqual(['Ölbaum', 'ab', 'b'])
    expect(await names({ text: 'ab' })).toEqual(['ab'])
    // One code point of two UTF-16 units, then two of four, then three.
    expect(await names({ text: '🌿' })).toEqual(['x🌿y', '🌿🌱 mix'])
    expect(await names({ text: '🌿🌱' })).toEqual(['🌿🌱 mix'])
    expect(await names({ text: '🌿🌱 ' })).toEqual(['🌿🌱 mix'])
    expect(await names({ text: 'x🌿y' })).toEqual(['x🌿y'])
    expect(await names({ text: 'b', order: { field: 'id', descending: true } })).toEqual([
      'b',
      'ab',
      'Ölbaum',
    ])
    expect(await store.plants.count({ text: 'b' })).toBe(3)
    expect(await store.plants.count({ text: '🌿' })).toBe(2)
  })

  it('keeps plants whose tag is any of several, in every order, paged and counted', async () => {
    const plants: NewPlant[] = []
    for (let id = 1n; id <= 30n; id++) {
      const tag = ['a', 'b', 'c', undefined][Number(id % 4n)]
      plants.push({ id, name: `plant ${40n - id}`, ...(tag ? { tag } : {}) })
    }
    await createAll(plants)
    const tagged = (tags: string[], text = '') =>
      plants.filter((p) => p.tag !== undefined && tags.includes(p.tag) && p.name.includes(text))
    for (const order of ORDERS) {
      const all = await pageThrough({ tags: ['a', 'c'], order }, 4)
      const ids = all.map(({ plant }) => plant.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect(new Set(ids)).toEqual(new Set(tagged(['a', 'c']).map((p) => p.id)))
    }
    const byId = await store.plants.list({ tags: ['c', 'a'], limit: 5 })
    expect(byId.map(({ plant }) => plant.id)).toEqual([2n, 4n, 6n, 8n, 10n])
    const down = await store.plants.list({
      tags: ['a', 'c'],
      order: { field: 'id', descending: true },
      limit: 3,
    })
    expect(down.map(({ plant }) => plant.id)).toEqual([30n, 28n, 26n])
    const byName = await store.plants.list({
      tags: ['a', 'b'],
      order: { field: 'name', descending: false },
      limit: 3,
    })
    expect(byName.map(({ plant }) => plant.name)).toEqual(['plant 11', 'plant 12', 'plant 15'])
    expect(byName.map(({ key }) => key)).toEqual(['plant 11', 'plant 12', 'plant 15'])
    // With a text too, by trigram or by scan: both must hold.
    for (const text of ['nt 1', '1', '2', 'plant 2']) {
      const expected = tagged(['a', 'b'], text).map((p) => p.name)
      expect(expected.length).toBeGreaterThan(1)
      expect(await names({ tags: ['a', 'b'], text })).toEqual(expected)
      expect(await names({ tags: ['b', 'a'], text, order: { field: 'id', descending: true } })).toEqual(
        [...expected].reverse(),
      )
      expect(await store.plants.count({ tags: ['a', 'b'], text })).toBe(expected.length)
    }
    expect(await store.plants.count({ tags: ['a', 'b'] })).toBe(tagged(['a', 'b']).length)
    expect(await store.plants.count({ tags: ['a'] })).toBe(tagged(['a']).length)
    expect(await store.plants.count({ tags: ['none', 'other'] })).toBe(0)
    expect(await store.plants.count({})).toBe(30)
  })

  it('sorts by each field both ways, names by code point, ties by id in the same direction', async () => {
    // Created in two turns, several at once: each turn's plants share their creation time.
    const first: NewPlant[] = [
      { id: 5n, name: 'same' },
      { id: 30n, name: 'Zebra' },
      { id: 9n, name: 'same' },
      { id: 2n, name: '\uFB00 ligature' },
    ]
    const second: NewPlant[] = [
      { id: 7n, name: '🌿 leaf' },
      { id: 1n, name: 'same' },
      { id: 4n, name: 'apple' },
      { id: 8n, name: 'Éclair' },
    ]
    expect(await Promise.all(first.map((p) => store.plants.create(p)))).toEqual(first.map(() => 'created'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await Promise.all(second.map((p) => store.plants.create(p)))).toEqual(second.map(() => 'created'))
    await new Promise((resolve) => setTimeout(resolve, 5))
    await store.plants.update(9n, { tag: 't' })
    const all = [...first, ...second]

    const listIds = async (order: PlantOrder) =>
      (await store.plants.list({ order, limit: 100 })).map(({ plant }) => plant.id)
    const up = { descending: false }
    const down = { descending: true }
    const ids = (plants: NewPlant[]) => plants.map((p) => p.id)
    const idOrder = (a: NewPlant, b: NewPlant) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

    expect(await listIds({ field: 'id', ...up })).toEqual(ids([...all].sort(idOrder)))
    expect(await listIds({ field: 'id', ...down })).toEqual(ids([...all].sort(idOrder).reverse()))
    const byName = [...all].sort((a, b) => byCodePoint(a.name, b.name) || idOrder(a, b))
    // U+FB00 sorts before U+1F33F by code point, after it by UTF-16 unit.
    expect(byName.map((p) => p.name)).toEqual([
      'Zebra',
      'apple',
      'same',
      'same',
      'same',
      'Éclair',
      'ﬀ ligature',
      '🌿 leaf',
    ])
    expect(await listIds({ field: 'name', ...up })).toEqual(ids(byName))
    expect(await listIds({ field: 'name', ...down })).toEqual(ids([...byName].reverse()))
    const byCreated = [...[...first].sort(idOrder), ...[...second].sort(idOrder)]
    expect(await listIds({ field: 'createdAt', ...up })).toEqual(ids(byCreated))
    expect(await listIds({ field: 'createdAt', ...down })).toEqual(ids([...byCreated].reverse()))
    const byUpdated = [...byCreated.filter((p) => p.id !== 9n), first[2] as NewPlant]
    expect(await listIds({ field: 'updatedAt', ...up })).toEqual(ids(byUpdated))
    expect(await listIds({ field: 'updatedAt', ...down })).toEqual(ids([...byUpdated].reverse()))

    // Keys: the name, or the stored instant as an integer; none for the id order.
    const named = await store.plants.list({ order: { field: 'name', ...up }, limit: 1 })
    expect(named).toEqual([{ plant: { id: 30n, name: 'Zebra' }, key: 'Zebra' }])
    const [a, b] = await store.plants
      .list({ order: { field: 'createdAt', ...up }, limit: 100 })
      .then((l) => [l[0], l[7]])
    expect(a?.key).toMatch(/^\d+$/)
    expect(BigInt(b?.key as string)).toBeGreaterThan(BigInt(a?.key as string))
    expect((await store.plants.list({ limit: 1 }))[0]?.key).toBeUndefined()
    // Searched in any order, by trigram and by scan.
    expect(await names({ text: 'sam', order: { field: 'id', ...down } })).toEqual(['same', 'same', 'same'])
    expect(await names({ text: 'e', order: { field: 'name', ...up } })).toEqual([
      'Zebra',
      'apple',
      'same',
      'same',
      'same',
      'ﬀ ligature',
      '🌿 leaf',
    ])
    expect(await names({ text: 'eaf', order: { field: 'updatedAt', ...down } })).toEqual(['🌿 leaf'])
  })

  it('pages through every order, each plant exactly once, the same with a filter', async () => {
    const plants: NewPlant[] = []
    for (let i = 0; i < 23; i++) {
      // Names repeat, so pages end inside a run of equal keys.
      plants.push({
        id: BigInt(i * 7919 - 80_000),
        name: `Fern ${i % 4}`,
        ...(i % 3 === 0 ? { tag: 'x' } : {}),
      })
    }
    // In batches of five that share their times, so times tie too.
    for (let i = 0; i < plants.length; i += 5)
      await Promise.all(plants.slice(i, i + 5).map((p) => store.plants.create(p)))
    for (const order of ORDERS) {
      for (const size of [1, 2, 5, 100]) {
        const seen = await pageThrough({ order }, size)
        expect(seen.map(({ plant }) => plant.id)).toEqual(
          (await store.plants.list({ order, limit: 100 })).map(({ plant }) => plant.id),
        )
        expect(new Set(seen.map(({ plant }) => plant.id)).size).toBe(plants.length)
      }
      const found = await pageThrough({ order, text: 'ern 1' }, 2)
      expect(found.map(({ plant }) => plant.name)).toEqual(Array(6).fill('Fern 1'))
      const short = await pageThrough({ order, text: '3' }, 2)
      expect(short.map(({ plant }) => plant.name)).toEqual(Array(5).fill('Fern 3'))
      const tagged = await pageThrough({ order, tags: ['x'] }, 3)
      expect(tagged.map(({ plant }) => plant.id).sort()).toEqual(
        plants
          .filter((p) => p.tag === 'x')
          .map((p) => p.id)
          .sort(),
      )
    }
  })

  it('neither repeats nor skips a plant that did not change while others are created and changed between pages', async () => {
    const plants: NewPlant[] = []
    for (let i = 0; i < 12; i++) plants.push({ id: BigInt(100 + i), name: `m${String(i).padStart(2, '0')}` })
    await createAll(plants)
    for (const order of ORDERS) {
      let turn = 0
      const touched = new Set<bigint>()
      const seen = await pageThrough({ order }, 3, async () => {
        turn++
        // A new plant at either end of each order, and a change that moves a plant across the page.
        const id = BigInt(ORDERS.indexOf(order) + 1) * 10_000n * (turn % 2 ? -1n : 1n) + BigInt(turn)
        await store.plants.create({ id, name: turn % 2 ? 'a new' : 'z new' })
        const moved = BigInt(100 + ((turn * 5) % 12))
        touched.add(moved)
        await store.plants.update(moved, { name: `${turn % 2 ? 'a' : 'z'}${moved}` })
      })
      const unchanged = plants.filter((p) => !touched.has(p.id)).map((p) => p.id)
      const counts = new Map<bigint, number>()
      for (const { plant } of seen) counts.set(plant.id, (counts.get(plant.id) ?? 0) + 1)
      for (const id of unchanged) expect(counts.get(id), `${order.field} ${order.descending} ${id}`).toBe(1)
      // Put back for the next order.
      for (const id of touched)
        await store.plants.update(id, { name: `m${String(Number(id) - 100).padStart(2, '0')}` })
    }
  })

  it('counts the plants a filter keeps, not a page of them', async () => {
    expect(await store.plants.count({})).toBe(0)
    for (let id = 1n; id <= 12n; id++)
      await store.plants.create({ id, name: `Fern ${id}`, ...(id % 2n ? { tag: 'odd' } : {}) })
    expect(await store.plants.count({})).toBe(12)
    expect(await store.plants.count({ text: 'fern 1' })).toBe(4)
    expect(await store.plants.count({ text: 'FERN' })).toBe(12)
    expect(await store.plants.count({ tags: ['odd'] })).toBe(6)
    expect(await store.plants.count({ tags: ['odd'], text: 'fern 1' })).toBe(2)
    expect(await store.plants.count({ text: 'palm' })).toBe(0)
  })

  it('folds the names of plants stored before search came, a chunk at a time, and finds them', async () => {
    const url = await kind.freshUrl()
    const location = parseDatabaseUrl(url)
    if (!location) throw new Error(url)
    const stored = [
      [-9223372036854775808n, 'ÖLBAUM first'],
      [1n, 'ΣΊΓΜΑ'],
      [2n, 'Kleiner ΟΔΟΣ'],
      [9223372036854775807n, 'Fern last'],
    ] as const
    // More plants than a chunk of the PostgreSQL backfill holds.
    const many = 12_001
    if (location.kind === 'sqlite') {
      const db = new Database(location.path)
      sqliteMigrations.migrate(
        db,
        sqliteMigrations.loadMigrations().filter((m) => m.version < 18),
      )
      const insert = db.prepare(
        'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (?, ?, ?, 1, 1)',
      )
      db.transaction(() => {
        for (const [id, name] of stored) insert.run(id, name, null)
        for (let i = 1; i <= many; i++) insert.run(1000 + i, `Ölbaum ${i}`, 'many')
      })()
      db.close()
    } else {
      await admin(url, async (client) => {
        await postgresMigrations.migrate(
          client,
          postgresMigrations.loadMigrations().filter((m) => m.version < 19),
        )
        await client.query(
          `INSERT INTO plants (id, name, created_at, updated_at)
           SELECT id, name, now(), now() FROM unnest($1::bigint[], $2::text[]) AS t(id, name)`,
          [stored.map(([id]) => id.toString()), stored.map(([, name]) => name)],
        )
        await client.query(
          `INSERT INTO plants (id, name, tag, created_at, updated_at)
           SELECT 1000 + x, 'Ölbaum ' || x, 'many', now(), now() FROM generate_series(1, $1::int) AS x`,
          [many],
        )
      })
    }
    const upgraded = await openStore(location)
    try {
      // Later migrations run after it too.
      expect(upgraded.migrated[0]).toBe(kind.name === 'sqlite' ? '018_find_plants' : '019_find_plants')
      const found = async (text: string) =>
        (await upgraded.plants.list({ text, limit: 5 })).map(({ plant }) => plant.id)
      expect(await found('ölb')).toEqual([-9223372036854775808n, 1001n, 1002n, 1003n, 1004n])
      expect(await found('σίγμα')).toEqual([1n])
      expect(await found('οδος')).toEqual([2n])
      expect(await found('n last')).toEqual([9223372036854775807n])
      expect(await found('baum 12001')).toEqual([13001n])
      expect(await found('baum 12002')).toEqual([])
      expect(await upgraded.plants.count({ text: 'ölbaum' })).toBe(many + 1)
      expect(await upgraded.plants.count({ text: 'ö', tags: ['many'] })).toBe(many)
      // Every stored name folded, the first plant of each chunk and the last too.
      const all = await upgraded.plants.list({ order: { field: 'name', descending: true }, limit: 2 })
      expect(all.map(({ plant }) => plant.name)).toEqual(['ΣΊΓΜΑ', 'Ölbaum 9999'])
      let folded: Array<{ name: string; name_folded: string }>
      if (location.kind === 'sqlite') {
        folded = (upgraded as SqliteStore).db
          .prepare('SELECT name, name_folded FROM plants')
          .all() as typeof folded
      } else {
        folded = (await (upgraded as PostgresStore).pool.query('SELECT name, name_folded FROM plants')).rows
      }
      expect(folded).toHaveLength(many + stored.length)
      for (const row of folded) expect(row.name_folded).toBe(foldName(row.name))
      // Written by the store from now on, with each create and change.
      await upgraded.plants.create({ id: 5n, name: 'NEW Ölbaum' })
      await upgraded.plants.update(1n, { name: 'Ölbaum renamed' })
      expect(await upgraded.plants.count({ text: 'ölbaum' })).toBe(many + 3)
    } finally {
      await upgraded.close()
    }
  })

  if (kind.name === 'sqlite') {
    it('walks an index for each order and the trigram index for a search', async () => {
      const db = (store as SqliteStore).db
      const plan = (sql: string, ...params: unknown[]) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>)
          .map((step) => step.detail)
          .join('\n')
      for (const [column, index] of [
        ['name', 'plants_name_id'],
        ['created_at', 'plants_created_id'],
        ['updated_at', 'plants_updated_id'],
      ])
        expect(
          plan(
            `SELECT id FROM plants p WHERE (p.${column}, p.id) > (?, ?) ORDER BY p.${column} DESC, p.id DESC LIMIT 5`,
            'a',
            1,
          ),
        ).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}`))
      expect(
        plan(
          'SELECT p.id FROM plant_names CROSS JOIN plants p ON p.id = plant_names.rowid WHERE plant_names MATCH \'"fer"\' ORDER BY plant_names.rowid LIMIT 5',
        ),
      ).toMatch(/VIRTUAL TABLE INDEX/)
      await createAll([{ id: 1n, name: 'Fern' }])
      await store.plants.update(1n, { name: 'Palm' })
      // The trigram index holds what the table holds.
      db.prepare("INSERT INTO plant_names (plant_names, rank) VALUES ('integrity-check', 1)").run()
    })
  }

  if (kind.name === 'postgres') {
    it('keys times by the exact microsecond, and pages between plants a microsecond apart', async () => {
      await createAll([1n, 2n, 3n].map((id) => ({ id, name: `p${id}` })))
      const pool = (store as PostgresStore).pool
      await pool.query(
        `UPDATE plants SET created_at = t.at FROM (VALUES (1, timestamptz '2026-01-01 00:00:00.000001+00'),
           (2, timestamptz '2026-01-01 00:00:00.000002+00'), (3, timestamptz '2026-01-01 00:00:00.000002+00')) AS t(id, at)
         WHERE plants.id = t.id`,
      )
      const order = { field: 'createdAt', descending: false } as const
      const listed = await store.plants.list({ order, limit: 10 })
      expect(listed.map(({ key }) => key)).toEqual([
        '1767225600000001',
        '1767225600000002',
        '1767225600000002',
      ])
      const [first, second] = listed
      expect(
        (
          await store.plants.list({
            order,
            after: { id: first?.plant.id as bigint, key: first?.key as string },
            limit: 10,
          })
        ).map(({ plant }) => plant.id),
      ).toEqual([2n, 3n])
      expect(
        (
          await store.plants.list({
            order,
            after: { id: second?.plant.id as bigint, key: second?.key as string },
            limit: 10,
          })
        ).map(({ plant }) => plant.id),
      ).toEqual([3n])
      const back = { field: 'createdAt', descending: true } as const
      expect(
        (await store.plants.list({ order: back, after: { id: 2n, key: '1767225600000002' }, limit: 10 })).map(
          ({ plant }) => plant.id,
        ),
      ).toEqual([1n])
    })

    it('walks an index for each order and the trigram index for a search', async () => {
      const client = await (store as PostgresStore).pool.connect()
      try {
        // The table is too small for the planner to prefer any index on its own.
        await client.query('SET enable_seqscan = off')
        const plan = async (sql: string, params: unknown[]) =>
          (await client.query(`EXPLAIN ${sql}`, params)).rows.map((r) => r['QUERY PLAN']).join('\n')
        expect(
          await plan(
            `SELECT id FROM plants WHERE (name COLLATE "C", id) > ($1::text, $2::bigint) ORDER BY name COLLATE "C" DESC, id DESC LIMIT 5`,
            ['a', 1],
          ),
        ).toMatch(/Index (Only )?Scan (Backward )?using plants_name_id/)
        for (const [column, index] of [
          ['created_at', 'plants_created_id'],
          ['updated_at', 'plants_updated_id'],
        ])
          expect(
            await plan(
              `SELECT id FROM plants WHERE (${column}, id) > (now(), $1::bigint) ORDER BY ${column}, id LIMIT 5`,
              [1],
            ),
          ).toMatch(new RegExp(`Index (Only )?Scan using ${index}`))
        expect(await plan(`SELECT id FROM plants WHERE name_folded LIKE $1 ESCAPE '\\'`, ['%fern%'])).toMatch(
          /Bitmap Index Scan on plants_name_folded/,
        )
      } finally {
        await client.query('RESET enable_seqscan')
        client.release()
      }
    })
  }
})
