import { statSync } from 'node:fs'
import { join } from 'node:path'
import { redactTokens } from '../redact.js'
import { NO_FILE_BACKUP_ON_POSTGRES } from '../store/errors.js'
import { openStore } from '../store/open.js'
import { type CliDatabaseOptions, databaseLocation, withStoreToRead } from './database.js'
import { isFolder, refuseSpecialFile } from './output-file.js'
import { whyNotWritable } from './private-file.js'

/** A consistent copy of the live database, taken without stopping the server (docs/operations.md says how to restore it). */
export async function backupDatabase(file: string, options: CliDatabaseOptions): Promise<void> {
  // Said before connecting: opening would first create or migrate the schema of a database that
  // this command can only refuse.
  if (databaseLocation(options).kind === 'postgres') throw new Error(NO_FILE_BACKUP_ON_POSTGRES)
  // A link, a device or a pipe at the path is refused as export refuses it, before connecting.
  refuseSpecialFile(file)
  // A folder exists as a file does; refused as a backup that must not be overwritten, it would say
  // neither what stands in the way nor what to give instead.
  if (isFolder(file)) {
    throw new Error(
      `${file} is a folder: name the backup file in it, such as ${join(file, 'plantstore.db')}; nothing was written`,
    )
  }
  await withStoreToRead(options, openStore, async (store) => {
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
