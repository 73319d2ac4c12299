import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach } from 'vitest'
import { createPlant } from '../../src/plants/service.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import { openPostgres, type PostgresStore } from '../../src/store/postgres/index.js'
import type { PlantStore, Store } from '../../src/store/types.js'
import { admin, createDatabase, TEST_DATABASE_URL } from './postgres.js'

/** A database every behaviour test can run against: each store kind yields fresh, empty databases. */
export interface StoreKind {
  name: 'sqlite' | 'postgres'
  /** A DATABASE_URL for a new, empty database (for tests that start real processes). */
  freshUrl(): Promise<string>
}

/** A new directory inside the run's own (removed when the run ends; see global-setup.ts). */
export function tempDir(prefix = 'plantstore-test-'): string {
  const dir = join(process.env.PLANTSTORE_TEST_TMP ?? tmpdir(), `${prefix}${randomUUID()}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

export const sqliteKind: StoreKind = {
  name: 'sqlite',
  freshUrl: async () => `sqlite:${join(tempDir(), 'plantstore.db')}`,
}

/** Present when TEST_DATABASE_URL names a server: each fresh URL is a new database on it. */
export const postgresKind: StoreKind | undefined = TEST_DATABASE_URL
  ? { name: 'postgres', freshUrl: () => createDatabase(TEST_DATABASE_URL as string) }
  : undefined

/** The store kinds enabled in this run. */
export const storeKinds: StoreKind[] = postgresKind ? [sqliteKind, postgresKind] : [sqliteKind]

export async function openFresh(kind: StoreKind): Promise<{ store: Store; url: string }> {
  const url = await kind.freshUrl()
  const location = parseDatabaseUrl(url)
  if (!location) throw new Error(`bad test database url ${url}`)
  return { store: await openStore(location), url }
}

/** The ids of every stored plant, read straight from the database (not through the service). */
export async function storedPlantIds(url: string): Promise<Set<string>> {
  const location = parseDatabaseUrl(url)
  if (location?.kind === 'sqlite') {
    const reader = new Database(location.path, { readonly: true })
    try {
      const ids = reader.prepare('SELECT id FROM plants').pluck().safeIntegers(true).all() as bigint[]
      return new Set(ids.map(String))
    } finally {
      reader.close()
    }
  }
  const rows = await admin(url, (c) => c.query<{ id: string }>('SELECT id::text AS id FROM plants'))
  return new Set(rows.rows.map((r) => r.id))
}

/** How many plant.created events the outbox holds, read straight from the database. */
export async function createdEvents(url: string): Promise<number> {
  const location = parseDatabaseUrl(url)
  const query = "SELECT count(*) AS n FROM events WHERE type = 'plant.created'"
  if (location?.kind === 'sqlite') {
    const reader = new Database(location.path, { readonly: true })
    try {
      return reader.prepare(query).pluck().get() as number
    } finally {
      reader.close()
    }
  }
  const rows = await admin(url, (c) => c.query<{ n: string }>(query))
  return Number(rows.rows[0]?.n)
}

/**
 * Plants 1 to 5: three tagged (2 `aroid`, 3 and 5 `fern`) and two without a tag, created out of id
 * order, for the tests of the tag index.
 */
export async function createTaggedAndUntagged(plants: PlantStore): Promise<void> {
  for (const [id, tag] of [
    [5n, 'fern'],
    [1n, undefined],
    [3n, 'fern'],
    [2n, 'aroid'],
    [4n, undefined],
  ] as const)
    await createPlant(plants, tag === undefined ? { id, name: `p${id}` } : { id, name: `p${id}`, tag })
}

/**
 * Opens PostgreSQL stores for the tests of one describe block and closes them after each test:
 * `fresh` on a database of its own, `another` on the same database as one opened before (a second
 * instance).
 */
export function postgresStores(): {
  /** The stores open now; a test may add one it opened otherwise, to be closed with them. */
  open: PostgresStore[]
  fresh: (options?: { revocationPollMs?: number }) => Promise<{ url: string; store: PostgresStore }>
  another: (url: string, options?: { revocationPollMs?: number }) => Promise<PostgresStore>
} {
  const open: PostgresStore[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close().catch(() => {})))
  })
  const another = async (url: string, options: { revocationPollMs?: number } = {}) => {
    const store = await openPostgres({ url, ...options })
    open.push(store)
    return store
  }
  const fresh = async (options: { revocationPollMs?: number } = {}) => {
    const url = await (postgresKind as StoreKind).freshUrl()
    return { url, store: await another(url, options) }
  }
  return { open, fresh, another }
}
