import { once } from 'node:events'
import { createWriteStream, lstatSync, openSync, renameSync, rmSync, statSync } from 'node:fs'
import type { Writable } from 'node:stream'
import { syncFile, syncFolderOf } from '../file-sync.js'
import { plantJson } from '../plants/events.js'
import type { Plant } from '../plants/model.js'
import { type CliDatabaseOptions, withStoreToRead } from './database.js'
import { whyNotWritable } from './private-file.js'

const PAGE = 5000

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

function cannotWrite(output: string, error: unknown): Error {
  return new Error(`cannot write ${output}: ${whyNotWritable(error)}`, { cause: error })
}

/**
 * Whether the output is written in place rather than replaced: a device or a pipe already there
 * (`/dev/stdout`, a FIFO read by gzip) was replaced by a regular file holding the export, and with
 * the permission to do so, /dev/null or /dev/full was gone for every other program. So is a symbolic
 * link, whatever it leads to: /dev/stdout is one, to the file a shell redirected stdout to when it
 * is one, and replacing it would leave that file empty and put the export in /dev. A folder given as
 * the output would get the copy inside it, then fail to be replaced by it.
 */
function writesInPlace(output: string): boolean {
  let folder = output.endsWith('/')
  let special = false
  try {
    special = !lstatSync(output).isFile()
    folder ||= statSync(output).isDirectory()
  } catch {
    // Nothing there yet: the usual case.
  }
  if (folder) throw cannotWrite(output, Object.assign(new Error('is a folder'), { code: 'EISDIR' }))
  return special
}

/**
 * Writes every plant as one JSON line `{id,name,tag?}` in id order, ids digit for digit. With
 * --output the file appears complete or not at all (written beside it, then renamed); a device, a
 * pipe or a symbolic link named by --output is written to as it is.
 */
export async function exportPlants(options: CliDatabaseOptions & { output?: string }): Promise<number> {
  const inPlace = options.output !== undefined && writesInPlace(options.output)
  return withStoreToRead(options, async (store) => {
    // Named for this process: two exports to the same file at once each write their own copy, and
    // the last to finish is the file.
    const partial =
      options.output === undefined || inPlace ? undefined : `${options.output}.${process.pid}.partial`
    const target = inPlace ? options.output : partial
    let out: Writable = process.stdout
    // A write error of the file arrives as an event, maybe while a page is being read (PostgreSQL):
    // unheard, it would crash the command with a stack. It is kept and thrown before the next write.
    let failure: Error | undefined
    let count = 0
    try {
      if (target !== undefined) {
        // The copy beside the output is made anew ('wx' neither follows nor reuses what is there):
        // in a folder others may write to, such as /tmp, a symbolic link planted at its predictable
        // name had the export overwrite the file it led to, then put that link at the output's name.
        if (partial !== undefined) rmSync(partial, { force: true })
        // Opened here, so that a file that cannot be created fails the command before any reading.
        const fd = openSync(target, partial === undefined ? 'w' : 'wx')
        out = createWriteStream(target, { fd }).on('error', (error) => {
          failure = error
        })
      }
      let after: bigint | undefined
      for (;;) {
        const page: Plant[] = await store.plants.list({ after, limit: PAGE })
        if (failure) throw failure
        if (page.length === 0) break
        await write(out, `${page.map(plantJson).join('\n')}\n`)
        count += page.length
        after = (page[page.length - 1] as Plant).id
      }
      if (target !== undefined) {
        out.end()
        await once(out, 'finish')
        if (partial !== undefined) {
          // Said to be exported once on the disk, name and all, as pg_dump makes sure of: unsynced, a
          // power loss after the command succeeded could leave an empty file, or none, at the output.
          syncFile(partial)
          renameSync(partial, options.output as string)
          syncFolderOf(options.output as string)
        }
      }
    } catch (error) {
      if (target !== undefined) {
        if (out !== process.stdout) out.destroy()
        if (partial !== undefined) rmSync(partial, { force: true })
        // The file that could not be written may be the one beside the output: the output is named.
        // A write's error (a full disk or device) carries no path: it is the output's as well.
        if (error === failure || (error as NodeJS.ErrnoException).path === target)
          throw cannotWrite(options.output as string, error)
      }
      throw error
    }
    process.stderr.write(`exported ${count} ${count === 1 ? 'plant' : 'plants'}\n`)
    return count
  })
}
