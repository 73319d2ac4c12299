import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { foldName } from '../src/plants/fold.js'
import { findStore, seededSqlite } from './find-store.js'
import { FERN_SHARE, plantLines, TAGS } from './plant-names.js'
import { tempDir } from './short-run.js'

const POSTGRES = process.env.TEST_DATABASE_URL

interface Line {
  id: string
  name: string
  tag?: string
}
const parse = (count: number): Line[] =>
  [...plantLines(count)]
    .join('')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line.replace(/"id":(\d+)/, '"id":"$1"')) as Line)

describe('the plants the find scenarios store', () => {
  it('have distinct ascending ids and names, "fern" in one name in twenty, and two in three a tag of eight', () => {
    const plants = parse(8400)
    expect(plants).toHaveLength(8400)
    const ids = plants.map((p) => BigInt(p.id))
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] as bigint))).toBe(true)
    expect(ids.at(-1)).toBeGreaterThan(2n ** 53n)
    expect(new Set(plants.map((p) => p.name)).size).toBe(8400)
    expect(FERN_SHARE).toBe(0.05)
    expect(plants.filter((p) => foldName(p.name).includes('fern')).length).toBe(8400 * FERN_SHARE)
    const tagged = plants.filter((p) => p.tag !== undefined)
    expect(tagged.length).toBe(5600)
    expect(new Set(tagged.map((p) => p.tag))).toEqual(new Set(TAGS))
    // Each tag about as common as any other, so a two-tag page keeps about a quarter of the tagged.
    for (const tag of TAGS) expect(tagged.filter((p) => p.tag === tag).length).toBe(700)
    // The same count gives the same plants.
    expect(parse(50)).toEqual(plants.slice(0, 50))
  })
})

describe("the find scenarios' store", () => {
  const count = (file: string) => {
    const db = new Database(file, { readonly: true })
    try {
      return db.prepare('SELECT name, name_folded AS folded FROM plants').all() as Array<{
        name: string
        folded: string
      }>
    } finally {
      db.close()
    }
  }

  it('on SQLite is imported once through the CLI, kept under its key, and copied for each run', async () => {
    const cache = tempDir()
    // A file seeded for the same count under another key (older migrations): replaced, not kept.
    writeFileSync(join(cache, 'find-300-0000000000000000.db'), '')
    const seeded = await seededSqlite(300, cache)
    expect(readdirSync(cache)).toEqual([seeded.slice(cache.length + 1)])
    const rows = count(seeded)
    expect(rows).toHaveLength(300)
    // Written by the store itself, as for any plant it is given.
    for (const { name, folded } of rows) expect(folded).toBe(foldName(name))
    expect(rows.filter((r) => r.folded.includes('fern'))).toHaveLength(15)

    const modified = statSync(seeded).mtimeMs
    expect(await seededSqlite(300, cache)).toBe(seeded)
    expect(statSync(seeded).mtimeMs).toBe(modified)

    const store = await findStore(undefined, 300, cache)
    const copy = store.url.replace(/^sqlite:/, '')
    expect(copy).not.toBe(seeded)
    const db = new Database(copy)
    db.prepare('DELETE FROM plants').run()
    db.close()
    expect(count(seeded)).toHaveLength(300)
    await store.cleanup()
    expect(existsSync(copy)).toBe(false)
  }, 60_000)

  it.skipIf(!POSTGRES)(
    'on PostgreSQL is imported into a schema of its own, dropped afterwards',
    async () => {
      const store = await findStore(POSTGRES, 300, tempDir())
      const client = new pg.Client({ connectionString: store.url })
      await client.connect()
      try {
        const { rows } = await client.query<{ name: string; folded: string }>(
          'SELECT name, name_folded AS folded FROM plants',
        )
        expect(rows).toHaveLength(300)
        for (const { name, folded } of rows) expect(folded).toBe(foldName(name))
        const schema = await client.query<{ schema: string }>('SELECT current_schema() AS schema')
        await store.cleanup()
        const left = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
          schema.rows[0]?.schema,
        ])
        expect(left.rows).toEqual([])
      } finally {
        await client.end()
      }
    },
    60_000,
  )
})
