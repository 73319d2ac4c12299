import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openStore } from '../src/store/open.js'
import { WalIndex } from '../src/store/sqlite/wal-index.js'
import type { Store } from '../src/store/types.js'
import { type DispatchSettings, dispatcherStoreOptions } from '../src/webhooks/runner.js'

describe('the dispatcher thread’s SQLite connection', () => {
  let dir: string
  const opened: Store[] = []
  afterEach(async () => {
    for (const store of opened.splice(0).reverse()) await store.close()
    rmSync(dir, { recursive: true, force: true })
  })

  // Under a create load the log stays past SQLite's default of 1000 frames between the checkpoint
  // thread's runs: a dispatcher commit that checkpointed there copied the log back and fsynced it.
  it('leaves a log past 1000 frames to the checkpoint thread instead of checkpointing in its commits', async () => {
    dir = mkdtempSync(join(tmpdir(), 'plantstore-dispatch-ckpt-'))
    const path = join(dir, 'p.db')
    const location = { kind: 'sqlite' as const, path }
    opened.push(await openStore(location))
    const settings = { databasePoolSize: 10, databaseTimeoutMs: 5000 } as DispatchSettings
    const dispatcher = await openStore(location, dispatcherStoreOptions(settings))
    opened.push(dispatcher)

    const other = new Database(path)
    other.pragma('wal_autocheckpoint = 0')
    other.exec('CREATE TABLE filler (b BLOB)')
    other
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
         INSERT INTO filler SELECT randomblob(3000) FROM n`,
      )
      .run()
    other.close()
    const wal = new WalIndex(`${path}-shm`)
    expect(wal.read()?.frames).toBeGreaterThan(1000)
    expect(wal.read()?.backfilled).toBe(0)

    const at = new Date()
    await dispatcher.webhooks.insert({
      id: 'wh_checkpoint',
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
    await dispatcher.webhooks.release('owner', ['dlv_none'])
    expect(wal.read()?.backfilled).toBe(0)
  })
})
