import { statSync } from 'node:fs'
import { redactTokens } from '../log.js'
import { NO_FILE_BACKUP_ON_POSTGRES } from '../store/errors.js'
import { type CliDatabaseOptions, databaseLocation, withStoreToRead } from './database.js'
import { whyNotWritable } from './private-file.js'

/** A consistent copy of the live database, taken without stopping the server (see README: restore). */
export async function backupDatabase(file: string, options: CliDatabaseOptions): Promise<void> {
  // Said before connecting: opening would first create or migrate the schema of a database that
  // this command can only refuse.
  if (databaseLocation(options).kind === 'postgres') throw new Error(NO_FILE_BACKUP_ON_POSTGRES)
  await withStoreToRead(options, async (store) => {
    const started = Date.now()
    await store.backup(file).catch((error: unknown) => {
      // The file system's refusal of the path, before any copying: said about the path given.
      if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error
      throw new Error(`cannot write ${file}: ${whyNotWritable(error)}`, { cause: error })
    })
    const bytes = statSync(file).size
    // The file is named as given, except a token in its name (pasted where a path belonged).
    process.stderr.write(
      redactTokens(`backup written to ${file} (${bytes} bytes) in ${Date.now() - started} ms\n`),
    )
  })
}
