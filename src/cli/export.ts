import { once } from 'node:events'
import { createWriteStream, renameSync, rmSync } from 'node:fs'
import type { Writable } from 'node:stream'
import { plantJson } from '../plants/events.js'
import type { Plant } from '../plants/model.js'
import { type CliDatabaseOptions, withStore } from './database.js'

const PAGE = 5000

async function write(out: Writable, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain')
}

/**
 * Writes every plant as one JSON line `{id,name,tag?}` in id order, ids digit for digit. With
 * --output the file appears complete or not at all (written beside it, then renamed).
 */
export async function exportPlants(options: CliDatabaseOptions & { output?: string }): Promise<number> {
  return withStore(options, async (store) => {
    const partial = options.output === undefined ? undefined : `${options.output}.partial`
    const out: Writable = partial === undefined ? process.stdout : createWriteStream(partial)
    let count = 0
    try {
      let after: bigint | undefined
      for (;;) {
        const page: Plant[] = await store.plants.list({ after, limit: PAGE })
        if (page.length === 0) break
        await write(out, `${page.map(plantJson).join('\n')}\n`)
        count += page.length
        after = (page[page.length - 1] as Plant).id
      }
      if (partial !== undefined) {
        out.end()
        await once(out, 'finish')
        renameSync(partial, options.output as string)
      }
    } catch (error) {
      if (partial !== undefined) {
        out.destroy()
        rmSync(partial, { force: true })
      }
      throw error
    }
    process.stderr.write(`exported ${count} plants\n`)
    return count
  })
}
