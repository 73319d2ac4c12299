import { statSync } from 'node:fs'
import { type CliDatabaseOptions, withStore } from './database.js'

/** A consistent copy of the live database, taken without stopping the server (see README: restore). */
export async function backupDatabase(file: string, options: CliDatabaseOptions): Promise<void> {
  await withStore(options, async (store) => {
    const started = Date.now()
    await store.backup(file)
    const bytes = statSync(file).size
    process.stderr.write(`backup written to ${file} (${bytes} bytes) in ${Date.now() - started} ms\n`)
  })
}
