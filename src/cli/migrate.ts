import { openStore } from '../store/open.js'
import { type CliDatabaseOptions, withStore } from './database.js'

/** Creates or updates the database schema, and says on stderr which migrations ran. */
export async function migrateDatabase(options: CliDatabaseOptions): Promise<void> {
  await withStore(options, openStore, async (store) => {
    // Which ones ran is what an operator upgrading wants to see; a second run says nothing ran.
    const applied =
      store.migrated.length === 0 ? 'no migration to apply' : `applied ${store.migrated.join(', ')}`
    process.stderr.write(`schema is up to date (${applied})\n`)
  })
}
