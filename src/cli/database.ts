import { existsSync } from 'node:fs'
import { ConfigError, DEFAULT_DATABASE_URL, parseDatabaseSetting } from '../config.js'
import type { DatabaseLocation, OpenOptions } from '../store/open.js'
import { explainWriteFailure } from '../store/sqlite/failures.js'
import type { Store } from '../store/types.js'

export interface CliDatabaseOptions {
  databaseUrl?: string
}

/**
 * What a command opens of its database: the whole store (openStore), or what the token commands use
 * of it (openTokens), which on SQLite loads the tokens' code alone.
 */
type Opener<S extends Pick<Store, 'close'>> = (location: DatabaseLocation, options: OpenOptions) => Promise<S>

/** The database a command names: its --database-url, else DATABASE_URL, else the default file. */
export function databaseLocation(options: CliDatabaseOptions): DatabaseLocation {
  return parseDatabaseSetting(options.databaseUrl ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL)
}

/** Opens (creating and migrating) the database a command names, runs `work`, and always closes it. */
export async function withStore<S extends Pick<Store, 'close'>, T>(
  options: CliDatabaseOptions,
  open: Opener<S>,
  work: (store: S) => Promise<T>,
  openOptions: OpenOptions = {},
): Promise<T> {
  const location = databaseLocation(options)
  // Such a store lives and dies with the one process that opens it, a server started with it too: a
  // command would export or back up an empty one, or import into one gone when it exits.
  if (location.kind === 'sqlite' && location.path === ':memory:') {
    throw new ConfigError(
      'sqlite::memory: is a throwaway store that exists only inside the process that opens it: this command would find it empty and leave nothing in it; give the database the server uses',
    )
  }
  const store = await open(location, openOptions)
  try {
    return await work(store)
  } catch (error) {
    throw location.kind === 'sqlite' ? explainWriteFailure(error, location.path) : error
  } finally {
    await store.close()
  }
}

/**
 * As withStore, for a command that only reads or changes what a database holds (export, backup,
 * token list and revoke): a SQLite file that does not exist is a mistyped path, refused, not created
 * empty and read as if nothing were stored.
 */
export async function withExistingStore<S extends Pick<Store, 'close'>, T>(
  options: CliDatabaseOptions,
  open: Opener<S>,
  work: (store: S) => Promise<T>,
  openOptions: OpenOptions = {},
): Promise<T> {
  const location = databaseLocation(options)
  if (location.kind === 'sqlite' && location.path !== ':memory:' && !existsSync(location.path)) {
    throw new Error(
      `no database at ${location.path}; this command creates none (\`plantstore migrate\` or \`token create\` does)`,
    )
  }
  return withStore(options, open, work, openOptions)
}

/**
 * As withExistingStore, for a command that only reads (export, backup, token list): a SQLite
 * database whose schema is current is read without any write, so that it can still be copied off a
 * disk that is full, or read by a user who may not write it.
 */
export function withStoreToRead<S extends Pick<Store, 'close'>, T>(
  options: CliDatabaseOptions,
  open: Opener<S>,
  work: (store: S) => Promise<T>,
): Promise<T> {
  return withExistingStore(options, open, work, { toRead: true })
}
