import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { createDatabase, TEST_DATABASE_URL } from './postgres.js'

/** A database every behaviour test can run against: each store kind yields fresh, empty databases. */
export interface StoreKind {
  name: 'sqlite' | 'postgres'
  /** A DATABASE_URL for a new, empty database (for tests that start real processes). */
  freshUrl(): Promise<string>
}

export function tempDir(prefix = 'plantstore-test-'): string {
  const dir = join(tmpdir(), `${prefix}${randomUUID()}`)
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
