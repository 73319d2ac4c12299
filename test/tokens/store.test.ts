import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { TokenService } from '../../src/tokens/service.js'
import { admin } from '../helpers/postgres.js'
import { storeKinds, tempDir } from '../helpers/stores.js'

describe.each(storeKinds)('the first token on $name', (kind) => {
  const open: Store[] = []
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close()
  })

  /** Several stores on one new database, as several instances starting at once would open it. */
  async function instances(count: number): Promise<Store[]> {
    const location = parseDatabaseUrl(await kind.freshUrl())
    if (!location) throw new Error('bad test database url')
    for (let i = 0; i < count; i++) open.push(await openStore(location))
    return open.slice(-count)
  }

  it('is issued once however many instances ask for it at the same moment', async () => {
    const stores = await instances(4)
    const delivered: string[] = []
    const results = await Promise.all(
      stores.flatMap((store) =>
        [1, 2].map(() =>
          new TokenService(store.tokens).createFirst('bootstrap', ['plants:read'], (token) => {
            delivered.push(token)
          }),
        ),
      ),
    )
    const issued = results.filter((r) => r !== undefined)
    expect(issued).toHaveLength(1)
    expect(delivered).toEqual([issued[0]?.token])
    expect((await stores[0]?.tokens.list())?.map((t) => t.id)).toEqual([issued[0]?.record.id])
  })

  it('is not issued, and its secret not handed out, once any token exists', async () => {
    const [store] = await instances(1)
    if (!store) throw new Error('no store')
    const tokens = new TokenService(store.tokens)
    const { record } = await tokens.create('operator', ['plants:read'])
    let delivered = false
    expect(await tokens.createFirst('bootstrap', ['plants:read'], () => (delivered = true))).toBeUndefined()
    expect(delivered).toBe(false)
    expect((await store.tokens.list()).map((t) => t.id)).toEqual([record.id])
  })

  it('is not stored when its secret cannot be handed out, so a later attempt issues it', async () => {
    const [store] = await instances(1)
    if (!store) throw new Error('no store')
    const tokens = new TokenService(store.tokens)
    await expect(
      tokens.createFirst('bootstrap', ['plants:read'], () => {
        throw new Error('disk full')
      }),
    ).rejects.toThrow('disk full')
    expect(await store.tokens.list()).toEqual([])
    expect(await tokens.createFirst('bootstrap', ['plants:read'], () => {})).toBeDefined()
  })
})

describe.each(storeKinds)('revoking a token on $name', (kind) => {
  it('a second time keeps its first revocation and leaves the revocation epoch alone', async () => {
    const location = parseDatabaseUrl(await kind.freshUrl())
    if (!location) throw new Error('bad test database url')
    const store = await openStore(location)
    try {
      const tokens = new TokenService(store.tokens)
      const { record } = await tokens.create('leaked', ['plants:read'])
      expect(await store.tokens.revoke(record.id, new Date(1_000))).toBe('revoked')
      const epoch = store.tokens.revocationEpoch()
      expect(await store.tokens.revoke(record.id, new Date(2_000))).toBe('already-revoked')
      expect(store.tokens.revocationEpoch()).toBe(epoch)
      expect((await store.tokens.find(record.id))?.revokedAt).toEqual(new Date(1_000))
      expect(await store.tokens.revoke('ffffffffffffffff', new Date())).toBe('not-found')
    } finally {
      await store.close()
    }
  })
})

describe('a token use noted on SQLite while another process holds the write lock', () => {
  it('waits for the lock without holding the event loop, then is written', async () => {
    const path = join(tempDir(), 'p.db')
    const store = await openStore({ kind: 'sqlite', path })
    const locker = new Database(path)
    try {
      const { record } = await new TokenService(store.tokens).create('t', ['plants:read'])
      locker.exec('BEGIN IMMEDIATE')
      const at = new Date('2026-01-02T03:04:05.678Z')
      const started = performance.now()
      const touching = store.tokens.touchLastUsed(record.id, at)
      // SQLite's own busy handler would have held the loop for the busy timeout (5 s) before this.
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(performance.now() - started).toBeLessThan(1000)
      locker.exec('ROLLBACK')
      await touching
      expect((await store.tokens.list())[0]?.lastUsedAt).toEqual(at)
    } finally {
      locker.close()
      await store.close()
    }
  })
})

describe.each(storeKinds)('tokens stored before migration 015 on $name', (kind) => {
  it('verify as before once migrated, with no previous secret and no limit of their own', async () => {
    const url = await kind.freshUrl()
    const location = parseDatabaseUrl(url)
    if (!location) throw new Error('bad test database url')
    const before = await openStore(location)
    const { token, record } = await new TokenService(before.tokens).create('old', ['plants:read'])
    await before.close()
    // The schema as migration 014 left it: none of the new columns, nor the listing's index.
    const undo = `DROP INDEX tokens_by_creation;
      ALTER TABLE tokens DROP COLUMN previous_secret_hash;
      ALTER TABLE tokens DROP COLUMN previous_secret_expires_at;
      ALTER TABLE tokens DROP COLUMN rate_limit_count;
      ALTER TABLE tokens DROP COLUMN rate_limit_window_ms;
      DELETE FROM schema_migrations WHERE version = 15`
    if (location.kind === 'sqlite') {
      const db = new Database(location.path)
      db.exec(undo)
      db.close()
    } else await admin(url, (c) => c.query(undo))

    const store = await openStore(location)
    try {
      const tokens = new TokenService(store.tokens)
      expect((await tokens.verify(token)).rateLimit).toBeNull()
      expect(await store.tokens.find(record.id)).toMatchObject({
        previousSecretHash: null,
        previousSecretExpiresAt: null,
        rateLimit: null,
      })
      const rolled = await tokens.roll(record.id, 60_000)
      expect((await tokens.verify(token)).tokenId).toBe(record.id)
      expect((await tokens.verify(rolled.token)).tokenId).toBe(record.id)
    } finally {
      await store.close()
    }
  })
})

describe.each(storeKinds)('the token listing on $name', (kind) => {
  it('pages by creation then id, each page starting after the cursor', async () => {
    const location = parseDatabaseUrl(await kind.freshUrl())
    if (!location) throw new Error('bad test database url')
    const store = await openStore(location)
    try {
      const at = new Date('2026-03-01T00:00:00.000Z')
      const tokens = new TokenService(store.tokens, { now: () => at.getTime() })
      // Created in the same millisecond: the id orders them.
      for (let i = 0; i < 5; i++) await tokens.create(`t${i}`, ['plants:read'])
      const all = (await store.tokens.list()).map((t) => t.id)
      expect(all).toEqual([...all].sort())
      const first = await tokens.list({ limit: 2 })
      expect(first.tokens.map((t) => t.id)).toEqual(all.slice(0, 2))
      expect(first.next).toBe(`${at.getTime()}.${all[1]}`)
      const rest = await tokens.list({ limit: 3, after: { createdAt: at, id: all[1] as string } })
      expect(rest.tokens.map((t) => t.id)).toEqual(all.slice(2))
      expect(rest.next).toBeUndefined()
    } finally {
      await store.close()
    }
  })
})
