import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { openSqlite, type SqliteStore } from '../../src/store/sqlite/index.js'
import { TokenService } from '../../src/tokens/service.js'
import { tempDir } from '../helpers/stores.js'

/** Ends the current turn of the event loop: a token service looks at the epoch once per turn. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe('the SQLite revocation epoch', () => {
  const opened: SqliteStore[] = []
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close()
  })
  const open = (path: string) => {
    const store = openSqlite({ path })
    opened.push(store)
    return store
  }

  it("moves for another process's revocation, between the creates this one commits, and not for the creates", async () => {
    const path = join(tempDir(), 'p.db')
    const serving = open(path)
    const cli = open(path)
    // The creates open the connection they commit on, from which the epoch is then watched.
    await serving.plants.create({ id: 1n, name: 'a' })
    const start = serving.tokens.revocationEpoch()
    await serving.plants.create({ id: 2n, name: 'b' })
    expect(serving.tokens.revocationEpoch()).toBe(start)

    const tokens = new TokenService(serving.tokens)
    const { token, record } = await new TokenService(cli.tokens).create('ci', ['plants:read'])
    expect((await tokens.verify(token)).tokenId).toBe(record.id)
    await nextTurn()
    expect(await cli.tokens.revoke(record.id, new Date())).toBe('revoked')
    await serving.plants.create({ id: 3n, name: 'c' })
    expect(serving.tokens.revocationEpoch()).toBe(start + 1)
    await nextTurn()
    await expect(tokens.verify(token)).rejects.toMatchObject({ entry: errors.TOKEN_REVOKED })
  })

  it('sees its own revocation at once, and after the writer is closed reads from its own connection', async () => {
    const path = join(tempDir(), 'p.db')
    const serving = open(path)
    await serving.plants.create({ id: 1n, name: 'a' })
    const start = serving.tokens.revocationEpoch()
    const { record } = await new TokenService(serving.tokens).create('ci', ['plants:read'])
    await serving.tokens.revoke(record.id, new Date())
    expect(serving.tokens.revocationEpoch()).toBe(start + 1)
    serving.tokens.revocations.lookFrom(undefined)
    const cli = open(path)
    const other = await new TokenService(cli.tokens).create('other', ['plants:read'])
    await cli.tokens.revoke(other.record.id, new Date())
    expect(serving.tokens.revocationEpoch()).toBe(start + 2)
  })
})
