import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { openStore } from '../src/store/open.js'
import { WalIndex } from '../src/store/sqlite/wal-index.js'
import type { Store } from '../src/store/types.js'
import { type DispatchSettings, dispatcherStoreOptions } from '../src/webhooks/runner.js'

const settings = { databasePoolSize: 10, databaseTimeoutMs: 5000 } as DispatchSettings

/** Commits about `frames` pages of log on a connection of its own that never checkpoints. */
function writeLog(path: string, frames: number): void {
  const other = new Database(path)
  try {
    other.pragma('wal_autocheckpoint = 0')
    other.exec('CREATE TABLE IF NOT EXISTS filler (b BLOB)')
    other
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO filler SELECT randomblob(3000) FROM n`,
      )
      .run(frames)
  } finally {
    other.close()
  }
}

async function insertWebhook(store: Store): Promise<void> {
  const at = new Date()
  await store.webhooks.insert({
    id: `wh_${at.getTime()}${Math.random()}`,
    url: 'https://example.com/hook',
    events: ['plant.created'],
    description: null,
    secret: 'whsec_c2VjcmV0',
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt: at,
    updatedAt: at,
  })
}

describe('SQLite checkpoints outside the checkpoint thread', () => {
  let dir: string
  const opened: Store[] = []
  afterEach(async () => {
    for (const store of opened.splice(0).reverse()) await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const open = async (dispatcher: boolean) => {
    const store = await openStore(
      { kind: 'sqlite', path: join(dir, 'p.db') },
      dispatcher ? dispatcherStoreOptions(settings) : {},
    )
    opened.push(store)
    return store
  }

  // Under a create load the log stays past SQLite's default of 1000 frames between the checkpoint
  // thread's runs: a commit that checkpointed there copied the log back and fsynced it, on the event
  // loop (the main connection) or the dispatcher's thread.
  it.each([
    ['the main connection', false],
    ['the dispatcher’s connection', true],
  ])(
    '%s leaves a log past 1000 frames to the checkpoint thread instead of checkpointing in its commits',
    async (_, dispatcher) => {
      dir = mkdtempSync(join(tmpdir(), 'plantstore-backstop-'))
      const path = join(dir, 'p.db')
      const main = await open(false)
      const store = dispatcher ? await open(true) : main
      writeLog(path, 1500)
      const wal = new WalIndex(`${path}-shm`)
      expect(wal.read()?.frames).toBeGreaterThan(1000)
      expect(wal.read()?.backfilled).toBe(0)

      await insertWebhook(store)
      await store.webhooks.release('owner', ['dlv_none'])
      expect(wal.read()?.backfilled).toBe(0)
      wal.close()
    },
  )

  it('has the checkpoint thread copy back a log that other connections made long', async () => {
    dir = mkdtempSync(join(tmpdir(), 'plantstore-backstop-'))
    const path = join(dir, 'p.db')
    await open(false)
    // Past the automatic checkpoint's 5,000 frames, with no create of the store's own.
    writeLog(path, 6000)
    const wal = new WalIndex(`${path}-shm`)
    await vi.waitFor(() => expect(wal.read()?.backfilled).toBeGreaterThan(5000), {
      timeout: 5000,
      interval: 20,
    })
    wal.close()
  })

  it('leaves the log alone in a store whose process has another to see to it (the dispatcher’s)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'plantstore-backstop-'))
    const path = join(dir, 'p.db')
    await (await open(false)).close()
    opened.splice(0)
    await open(true)
    writeLog(path, 6000)
    // Three times the watch's period.
    await new Promise((resolve) => setTimeout(resolve, 600))
    const wal = new WalIndex(`${path}-shm`)
    expect(wal.read()?.frames).toBeGreaterThan(5000)
    expect(wal.read()?.backfilled).toBe(0)
    wal.close()
  })
})
