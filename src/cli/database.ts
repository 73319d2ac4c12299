import { DEFAULT_DATABASE_URL, parseDatabaseSetting } from '../config.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/types.js'

export interface CliDatabaseOptions {
  databaseUrl?: string
}

/** Opens (creating and migrating) the database a command names, runs `work`, and always closes it. */
export async function withStore<T>(
  options: CliDatabaseOptions,
  work: (store: Store) => Promise<T>,
): Promise<T> {
  const location = parseDatabaseSetting(
    options.databaseUrl ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
  )
  const store = await openStore(location)
  try {
    return await work(store)
  } finally {
    await store.close()
  }
}
