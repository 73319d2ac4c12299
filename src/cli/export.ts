import { once } from 'node:events'
import { createWriteStream, openSync, renameSync, rmSync } from 'node:fs'
import type { Writable } from 'node:stream'
import { syncFile, syncFolderOf } from '../file-sync.js'
import { plantJson } from '../plants/events.js'
import type { Plant } from '../plants/model.js'
import { openStore } from '../store/open.js'
import { activeSpan } from '../tracing/active.js'
import { type CliDatabaseOptions, withStoreToRead } from './database.js'
import { isFolder, refuseSpecialFile } from './output-file.js'
import { whyNotWritable } from './private-file.js'

const PAGE = 5000

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

function cannotWrite(output: string, error: unknown): Error {
  return new Error(`cannot write ${output}: ${whyNotWritable(error)}`, { cause: error })
}

/** Refuses an output nothing can be written into as a file: a folder, or a path ending in `/`. */
function refuseFolder(output: string): void {
  if (output.endsWith('/') || isFolder(output))
    throw cannotWrite(output, Object.assign(new Error('is a folder'), { code: 'EISDIR' }))
}

/**
 * Writes every plant as one JSON line `{id,name,tag?}` in id order, ids digit for digit, to standard
 * output, or with --output to a regular file that appears complete or not at all (written beside it,
 * synced, then renamed over it). A symbolic link, a device or a named pipe at --output is refused
 * (refuseSpecialFile), as backup refuses it; `-` is standard output.
 */
export async function exportPlants(options: CliDatabaseOptions & { output?: string }): Promise<number> {
  const output = options.output === '-' ? undefined : options.output
  if (output !== undefined) {
    refuseSpecialFile(output)
    refuseFolder(output)
  }
  return withStoreToRead(options, openStore, async (store) => {
    // Named for this process: two exports to the same file at once each write their own copy, and
    // the last to finish is the file.
    const partial = output === undefined ? undefined : `${output}.${process.pid}.partial`
    let out: Writable = process.stdout
    // A write error of the file arrives as an event, maybe while a page is being read (PostgreSQL):
    // unheard, it would crash the command with a stack. It is kept and thrown before the next write.
    let failure: Error | undefined
    let count = 0
    try {
      if (partial !== undefined) {
        // The copy beside the output is made anew ('wx' neither follows nor reuses what is there):
        // in a folder others may write to, such as /tmp, a symbolic link planted at its predictable
        // name would have the export overwrite the file it leads to, then put that link at the output's
        // name.
        rmSync(partial, { force: true })
        // Opened here, so that a file that cannot be created fails the command before any reading.
        const fd = openSync(partial, 'wx')
        out = createWriteStream(partial, { fd }).on('error', (error) => {
          failure = error
        })
      }
      let after: bigint | undefined
      for (;;) {
        const page: Plant[] = (
          await store.plants.list({ after: after === undefined ? undefined : { id: after }, limit: PAGE })
        ).map(({ plant }) => plant)
        if (failure) throw failure
        if (page.length === 0) break
        await write(out, `${page.map(plantJson).join('\n')}\n`)
        count += page.length
        after = (page[page.length - 1] as Plant).id
      }
      if (partial !== undefined) {
        out.end()
        await once(out, 'finish')
        // Said to be exported once on the disk, name and all, as pg_dump makes sure of: unsynced, a
        // power loss after the command succeeded could leave an empty file, or none, at the output.
        syncFile(partial)
        renameSync(partial, output as string)
        syncFolderOf(output as string)
      }
    } catch (error) {
      if (partial !== undefined) {
        if (out !== process.stdout) out.destroy()
        rmSync(partial, { force: true })
        // The file that could not be written may be the one beside the output: the output is named.
        // A write's error (a full disk) carries no path: it is the output's as well.
        if (error === failure || (error as NodeJS.ErrnoException).path === partial)
          throw cannotWrite(output as string, error)
      }
      throw error
    }
    activeSpan()?.setAttribute('plantstore.export.plants', count)
    process.stderr.write(`exported ${count} ${count === 1 ? 'plant' : 'plants'}\n`)
    return count
  })
}
