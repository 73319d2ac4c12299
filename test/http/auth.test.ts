import { describe, expect, it, vi } from 'vitest'
import { buildApp } from '../../src/app.js'
import { errors } from '../../src/errors.js'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Revocation, TokenRecord, TokenRoll, TokenStore } from '../../src/store/types.js'
import { TokenService } from '../../src/tokens/service.js'
import { appForSuite, errorOf, makeApp, postPlant } from '../helpers/app.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('bearer authentication on $name', (kind) => {
  const t = appForSuite(kind)

  const exists = async (id: string) =>
    (
      await t.app.inject({
        method: 'GET',
        url: `/plants/${id}`,
        headers: { authorization: `Bearer ${t.bearer}` },
      })
    ).statusCode === 200

  it('answers 401 with a bare Bearer challenge when no token is sent, and writes nothing', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/plants',
      headers: { 'content-type': 'application/json' },
      payload: '{"id": 500, "name": "a"}',
    })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer realm="plantstore"')
    expect(errorOf(res).error).toBe(errors.TOKEN_MISSING.code)
    expect(await exists('500')).toBe(false)
  })

  it.each(['Basic dXNlcjpwYXNz', 'Token abc', 'Bearer_x'])(
    'answers credentials of another scheme (%s) as no bearer token: the bare challenge',
    async (header) => {
      const res = await postPlant(t.app, t.bearer, '{"id": 508, "name": "a"}', { authorization: header })
      expect(res.statusCode).toBe(401)
      expect(res.headers['www-authenticate']).toBe('Bearer realm="plantstore"')
      expect(errorOf(res).error).toBe(errors.TOKEN_MISSING.code)
      expect(await exists('508')).toBe(false)
    },
  )

  it.each([
    ['Bearer', errors.TOKEN_MALFORMED],
    ['bearer   ', errors.TOKEN_MALFORMED],
    ['Bearer a b', errors.TOKEN_MALFORMED],
    ['Bearer not-a-plantstore-token', errors.TOKEN_MALFORMED],
    [`Bearer pst_0123456789abcdef_${'A'.repeat(43)}`, errors.TOKEN_UNKNOWN],
  ])('answers 401 invalid_token for %s', async (header, entry) => {
    const res = await postPlant(t.app, t.bearer, '{"id": 501, "name": "a"}', { authorization: header })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="plantstore", error="invalid_token"/)
    expect(errorOf(res).error).toBe(entry.code)
    expect(await exists('501')).toBe(false)
  })

  it('answers a token set off by a tab as a malformed bearer token, not as none sent', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 509, "name": "a"}', {
      authorization: `Bearer\t${t.bearer}`,
    })
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="plantstore", error="invalid_token"/)
    expect(errorOf(res).error).toBe(errors.TOKEN_MALFORMED.code)
    expect(await exists('509')).toBe(false)
  })

  it('refuses a known token id with the wrong secret', async () => {
    const wrong = `${t.bearer.slice(0, 'pst_0123456789abcdef_'.length)}${'B'.repeat(43)}`
    const res = await postPlant(t.app, wrong, '{"id": 502, "name": "a"}')
    expect(res.statusCode).toBe(401)
    expect(errorOf(res).error).toBe(errors.TOKEN_UNKNOWN.code)
  })

  it('accepts the scheme name in any case', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 503, "name": "a"}', {
      authorization: `bearer ${t.bearer}`,
    })
    expect(res.statusCode).toBe(200)
  })

  it('refuses an expired token with 401', async () => {
    const short = await t.token(['plants:write'], 1)
    await new Promise((r) => setTimeout(r, 20))
    const res = await postPlant(t.app, short, '{"id": 504, "name": "a"}')
    expect(res.statusCode).toBe(401)
    expect(errorOf(res).error).toBe(errors.TOKEN_EXPIRED.code)
    expect(await exists('504')).toBe(false)
  })

  it('refuses a token from the first request after it is revoked', async () => {
    const doomed = await t.tokens.create('doomed', ['plants:write'])
    expect((await postPlant(t.app, doomed.token, '{"id": 505, "name": "a"}')).statusCode).toBe(200)
    await t.tokens.revoke(doomed.record.id)
    const res = await postPlant(t.app, doomed.token, '{"id": 506, "name": "a"}')
    expect(res.statusCode).toBe(401)
    expect(errorOf(res).error).toBe(errors.TOKEN_REVOKED.code)
    expect(await exists('506')).toBe(false)
  })

  it('refuses a token another process revoked amid creates, from the first request after it reached this instance', async () => {
    const doomed = await t.tokens.create('doomed-elsewhere', ['plants:write'])
    for (const id of [510, 511, 512]) {
      expect((await postPlant(t.app, doomed.token, `{"id": ${id}, "name": "a"}`)).statusCode).toBe(200)
    }
    // A second store on the same database, as `plantstore token revoke` opens.
    const location = parseDatabaseUrl(t.url)
    if (!location) throw new Error(`bad url ${t.url}`)
    const cli = await openStore(location)
    let revokedAt: number
    try {
      expect(await new TokenService(cli.tokens).revoke(doomed.record.id)).toBe('revoked')
      revokedAt = cli.tokens.revocationEpoch()
    } finally {
      await cli.close()
    }
    if (kind.name === 'postgres') {
      // PostgreSQL's promise is weaker than SQLite's: the NOTIFY reaches this instance's listening
      // connection some time after the commit, within the documented 5 s bound.
      await vi.waitFor(() => expect(t.store.tokens.revocationEpoch()).toBeGreaterThanOrEqual(revokedAt), {
        timeout: 5000,
        interval: 5,
      })
    }
    const res = await postPlant(t.app, doomed.token, '{"id": 513, "name": "a"}')
    expect(res.statusCode).toBe(401)
    expect(errorOf(res).error).toBe(errors.TOKEN_REVOKED.code)
    expect(await exists('513')).toBe(false)
  })

  it('answers 403 insufficient_scope for a token without plants:write, and writes nothing', async () => {
    const reader = await t.token(['plants:read'])
    const res = await postPlant(t.app, reader, '{"id": 507, "name": "a"}')
    expect(res.statusCode).toBe(403)
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="plantstore", error="insufficient_scope", scope="plants:write"',
    )
    expect(errorOf(res).error).toBe(errors.SCOPE_MISSING.code)
    expect(await exists('507')).toBe(false)
  })

  it('holds every plant operation to the scope the endpoint table gives it', async () => {
    const reader = await t.token(['plants:read'])
    const other = await t.token(['webhooks:manage', 'metrics:read'])
    await postPlant(t.app, t.bearer, '{"id": 514, "name": "a"}')
    const operations = [
      { method: 'POST', url: '/plants', payload: '{"id": 515, "name": "a"}', scope: 'plants:write' },
      { method: 'GET', url: '/plants', scope: 'plants:read' },
      { method: 'GET', url: '/plants/514', scope: 'plants:read' },
      { method: 'HEAD', url: '/plants/514', scope: 'plants:read' },
      { method: 'PUT', url: '/plants/514', payload: '{"name": "b"}', scope: 'plants:write' },
      { method: 'PATCH', url: '/plants/514', payload: '{"name": "b"}', scope: 'plants:write' },
      { method: 'DELETE', url: '/plants/514', scope: 'plants:write' },
    ] as const
    for (const { scope, ...request } of operations) {
      const without = scope === 'plants:write' ? reader : other
      const contentType = request.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json'
      const res = await t.app.inject({
        ...request,
        headers: { authorization: `Bearer ${without}`, 'content-type': contentType },
      })
      expect([request.method, request.url, res.statusCode]).toEqual([request.method, request.url, 403])
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="plantstore", error="insufficient_scope", scope="${scope}"`,
      )
    }
    const unchanged = await t.app.inject({
      url: '/plants/514',
      headers: { authorization: `Bearer ${t.bearer}` },
    })
    expect(JSON.parse(unchanged.body)).toEqual({ id: 514, name: 'a' })
  })

  it('checks the token before the body: 401 even for a body that would be 400', async () => {
    const res = await postPlant(t.app, t.bearer, '{bad json', { authorization: 'Bearer nope' })
    expect(res.statusCode).toBe(401)
  })

  it('keeps /healthz public', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body)).toEqual({ status: 'ok' })
  })

  it('marks authenticated responses Cache-Control: no-store', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 508, "name": "a"}')
    expect(res.headers['cache-control']).toBe('no-store')
  })
})

describe.each(storeKinds)('token verification cost on $name', (kind) => {
  it('reads a token row at most once for 1,000 requests, and records last use at most once a minute', async () => {
    const t = await makeApp(kind)
    const token = await t.token()
    const find = vi.spyOn(t.store.tokens, 'find')
    const touch = vi.spyOn(t.store.tokens, 'touchLastUsed')
    for (let i = 0; i < 1000; i++) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/plants/1',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode).toBe(404)
    }
    await new Promise((r) => setImmediate(r))
    expect(find.mock.calls.length).toBeLessThanOrEqual(1)
    expect(touch.mock.calls.length).toBe(1)
    const [record] = (await t.store.tokens.list()).filter((r) => r.lastUsedAt !== null)
    expect(record?.lastUsedAt).toBeInstanceOf(Date)
    await t.close()
  })

  it('writes last use again once the interval has passed', async () => {
    const t = await makeApp(kind)
    let now = Date.now()
    const tokens = new TokenService(t.store.tokens, { now: () => now })
    const { token } = await tokens.create('clock', ['plants:read'])
    const touch = vi.spyOn(t.store.tokens, 'touchLastUsed')
    await tokens.verify(token)
    await tokens.verify(token)
    now += 61_000
    await tokens.verify(token)
    await new Promise((r) => setImmediate(r))
    expect(touch).toHaveBeenCalledTimes(2)
    await t.close()
  })
})

/** A token store in memory whose reads can be held, to place a revocation exactly inside one. */
class HeldTokenStore implements TokenStore {
  readonly rows = new Map<string, TokenRecord>()
  epoch = 0
  /** While set, find reads the row at once but answers only when this resolves. */
  hold: Promise<void> | undefined
  readonly reading: Array<() => void> = []

  async insert(token: TokenRecord) {
    this.rows.set(token.id, { ...token })
  }
  async find(id: string) {
    const row = this.rows.get(id)
    const read = row && { ...row }
    for (const tell of this.reading.splice(0)) tell()
    if (this.hold) await this.hold
    return read
  }
  async list() {
    return [...this.rows.values()]
  }
  /** As another process revokes: the row and the epoch change, this process's service is not told. */
  async revoke(id: string, at: Date): Promise<Revocation> {
    const row = this.rows.get(id)
    if (!row) return 'not-found'
    if (row.revokedAt) return 'already-revoked'
    row.revokedAt = at
    this.epoch++
    return 'revoked'
  }
  async roll(id: string, roll: TokenRoll) {
    const row = this.rows.get(id)
    if (!row || row.revokedAt) return undefined
    row.previousSecretHash = roll.previousSecretExpiresAt ? row.secretHash : null
    row.previousSecretExpiresAt = roll.previousSecretExpiresAt
    row.secretHash = roll.secretHash
    this.epoch++
    return { ...row }
  }
  async insertFirst(token: TokenRecord, deliver: () => void) {
    if (this.rows.size > 0) return false
    deliver()
    await this.insert(token)
    return true
  }
  async touchLastUsed() {}
  revocationEpoch() {
    return this.epoch
  }
}

describe("a process's own revocation", () => {
  it('is seen by the very next verification, within the same turn of the event loop', async () => {
    const store = new HeldTokenStore()
    const tokens = new TokenService(store)
    const doomed = await tokens.create('doomed', ['plants:read'])
    await tokens.verify(doomed.token)
    // No macrotask runs between these: the epoch read at the first verification is still taken
    // as fresh for this turn, unless the revocation says otherwise.
    expect(await tokens.revoke(doomed.record.id)).toBe('revoked')
    expect(tokens.verifyCached(doomed.token)).toBeUndefined()
    await expect(tokens.verify(doomed.token)).rejects.toMatchObject({ entry: errors.TOKEN_REVOKED })
  })
})

describe('a token row read before a revocation', () => {
  it('is never cached after another request saw the revocation', async () => {
    const store = new HeldTokenStore()
    const tokens = new TokenService(store)
    const doomed = await tokens.create('doomed', ['plants:read'])
    const other = await tokens.create('other', ['plants:read'])
    await tokens.verify(other.token)

    // The doomed token's row is read while it is still active, and the answer is held back.
    let release = () => {}
    store.hold = new Promise<void>((r) => {
      release = r
    })
    const read = new Promise<void>((r) => store.reading.push(r))
    const first = tokens.verify(doomed.token)
    await read
    // The revocation commits after that read, and another request sees the epoch move first.
    await store.revoke(doomed.record.id, new Date())
    await new Promise((r) => setImmediate(r))
    // That request finds the cache emptied: the other token has to be read again too.
    expect(tokens.verifyCached(other.token)).toBeUndefined()
    store.hold = undefined
    release()

    await expect(first).rejects.toMatchObject({ entry: errors.TOKEN_REVOKED })
    await expect(tokens.verify(doomed.token)).rejects.toMatchObject({ entry: errors.TOKEN_REVOKED })
    expect(tokens.verifyCached(doomed.token)).toBeUndefined()
  })
})

describe.each(storeKinds)('a token row read before another process revokes it, on $name', (kind) => {
  it('is refused from the first request after the revocation is seen', async () => {
    const t = await makeApp(kind)
    const location = parseDatabaseUrl(t.url)
    if (!location) throw new Error(`bad url ${t.url}`)
    const cli = await openStore(location)
    try {
      const doomed = await t.tokens.create('doomed', ['plants:read'])
      const other = await t.tokens.create('other', ['plants:read'])
      await t.tokens.verify(other.token)
      const find = t.store.tokens.find.bind(t.store.tokens)
      let revoked = false
      let cacheEmptied = false
      vi.spyOn(t.store.tokens, 'find').mockImplementation(async (id) => {
        const row = await find(id)
        if (id !== doomed.record.id || revoked) return row
        revoked = true
        // `plantstore token revoke` commits after this read; this process sees the epoch move (on
        // PostgreSQL by its notification) and a request checks it before the read is answered.
        const before = t.store.tokens.revocationEpoch()
        expect(await new TokenService(cli.tokens).revoke(doomed.record.id)).toBe('revoked')
        const deadline = Date.now() + 10_000
        while (t.store.tokens.revocationEpoch() === before && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10))
        }
        await new Promise((r) => setImmediate(r))
        cacheEmptied = t.tokens.verifyCached(other.token) === undefined
        return row
      })
      // This request was read before the revocation, so it may be answered either way; what matters
      // is what it leaves behind.
      await t.tokens.verify(doomed.token).catch(() => {})
      expect(revoked).toBe(true)
      expect(cacheEmptied).toBe(true)
      const res = await t.app.inject({
        method: 'GET',
        url: '/plants/1',
        headers: { authorization: `Bearer ${doomed.token}` },
      })
      expect(res.statusCode).toBe(401)
      expect(errorOf(res).error).toBe(errors.TOKEN_REVOKED.code)
    } finally {
      await cli.close()
      await t.close()
    }
  })
})

describe.each(storeKinds)('a token that expires while its row is being read, on $name', (kind) => {
  it('is refused as expired', async () => {
    const { store } = await openFresh(kind)
    // A clock of the test's own: the expiry falls inside the read whatever the machine's pace.
    let clock = Date.now()
    const tokens = new TokenService(store.tokens, { now: () => clock })
    const app = await buildApp({ store, tokens })
    try {
      const { token, record } = await tokens.create('t', ['plants:read'], 300)
      const find = store.tokens.find.bind(store.tokens)
      // The read is slow (a busy pool): the row comes back after the token's expiry.
      vi.spyOn(store.tokens, 'find').mockImplementation(async (id) => {
        const row = await find(id)
        clock = (record.expiresAt as Date).getTime() + 100
        return row
      })
      const res = await app.inject({
        method: 'GET',
        url: '/plants/1',
        headers: { authorization: `Bearer ${token}` },
      })
      expect(res.statusCode).toBe(401)
      expect(errorOf(res).error).toBe(errors.TOKEN_EXPIRED.code)
    } finally {
      await app.close()
      await store.close()
    }
  })
})
