import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openSqlite, type SqliteStore } from '../src/store/sqlite/index.js'
import { fileSink } from '../src/store/sqlite/writer.js'
import { tempDir } from './helpers/stores.js'

// Every fdatasync the sink starts is counted and held until the test lets it run.
const held: Array<() => void> = []
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  const fdatasync = (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) =>
    held.push(() => fs.fdatasync(fd, callback))
  return { ...fs, fdatasync, default: { ...fs, fdatasync } }
})

let store: SqliteStore | undefined
afterEach(async () => {
  await store?.close()
  store = undefined
})

describe("the batch sink's fsync asked for outside its batches (syncLog)", () => {
  it('joins the batches’ fsyncs: calls during one share the next, and a call alone starts one', async () => {
    const path = join(tempDir(), 'p.db')
    store = openSqlite({ path })
    const sink = fileSink(path, 5000)
    const order: string[] = []
    const batch = sink
      .write(
        [{ kind: 'create', id: 1n, name: 'a', tag: null, event: undefined, idempotency: undefined }],
        Date.now(),
      )
      .then(() => order.push('batch'))
    await vi.waitFor(() => expect(held).toHaveLength(1))
    // Asked while the batch's fsync runs, which may have started before what they wait for.
    const calls = [1, 2, 3].map((n) => sink.syncLog().then(() => order.push(`call ${n}`)))
    held.shift()?.()
    await batch
    expect(order).toEqual(['batch'])
    await vi.waitFor(() => expect(held).toHaveLength(1))
    held.shift()?.()
    await Promise.all(calls)
    expect(order).toEqual(['batch', 'call 1', 'call 2', 'call 3'])

    // With nothing under way, a call starts an fsync at once.
    const alone = sink.syncLog()
    await vi.waitFor(() => expect(held).toHaveLength(1))
    held.shift()?.()
    await alone
    expect(held).toHaveLength(0)
    await sink.close()
  })
})
