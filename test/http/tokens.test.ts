import type { LightMyRequestResponse } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { SCOPES, type Scope } from '../../src/tokens/scopes.js'
import { errorOf, makeApp, type TestApp } from '../helpers/app.js'
import { captureLines } from '../helpers/log.js'
import { storeKinds } from '../helpers/stores.js'

const TOKEN_SHAPE = /^pst_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/
const HOUR = 3_600_000

describe.each(storeKinds)('tokens over HTTP on $name', (kind) => {
  const open: TestApp[] = []
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close()
  })

  async function setUp(options: Parameters<typeof makeApp>[1] = {}) {
    const t = await makeApp(kind, options)
    open.push(t)
    const admin = await t.token(['tokens:manage', 'plants:read', 'plants:write'])
    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, token = admin) =>
      t.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      })
    const listPlants = (token: string) =>
      t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } })
    return { t, admin, call, listPlants }
  }

  const json = (res: LightMyRequestResponse) => res.json() as Record<string, unknown>

  it('issues a token whose secret is shown once, lists it, reads it and revokes it', async () => {
    const { t, admin, call, listPlants } = await setUp()
    const created = await call('POST', '/tokens', {
      name: '  ci reader ',
      scopes: ['plants:read'],
      expiresIn: '30d',
      rateLimit: '600/60s',
    })
    expect(created.statusCode).toBe(201)
    const body = json(created)
    const secret = body.secret as string
    expect(secret).toMatch(TOKEN_SHAPE)
    const id = TOKEN_SHAPE.exec(secret)?.[1] as string
    expect(created.headers.location).toBe(`/tokens/${id}`)
    expect(body).toMatchObject({
      id,
      name: 'ci reader',
      prefix: `pst_${id}_`,
      scopes: ['plants:read'],
      status: 'active',
      lastUsedAt: null,
      revokedAt: null,
      rateLimit: '600/1m',
      previousSecretExpiresAt: null,
      createdBy: { tokenId: TOKEN_SHAPE.exec(admin)?.[1] },
    })
    const lifetime = Date.parse(body.expiresAt as string) - Date.parse(body.createdAt as string)
    expect(lifetime).toBe(30 * 24 * HOUR)
    expect((await listPlants(secret)).statusCode).toBe(200)

    const read = await call('GET', `/tokens/${id}`)
    expect(read.statusCode).toBe(200)
    // As created, but for the use just made of it, which may be written by now or not.
    const { secret: _, ...view } = body
    expect({ ...json(read), lastUsedAt: null }).toEqual(view)
    const listed = await call('GET', '/tokens')
    expect(listed.statusCode).toBe(200)
    expect((json(listed).data as Array<{ id: string }>).map((token) => token.id)).toContain(id)
    // Neither a secret nor a hash is ever sent back after the creation.
    for (const answer of [read, listed]) {
      expect(answer.body).not.toContain(secret.slice(21))
      expect(answer.body).not.toMatch(/secret"|hash/i)
    }
    const stored = await t.store.tokens.find(id)
    expect(listed.body).not.toContain(stored?.secretHash)

    const revoked = await call('DELETE', `/tokens/${id}`)
    expect([revoked.statusCode, revoked.body]).toEqual([204, ''])
    const refused = await listPlants(secret)
    expect([refused.statusCode, errorOf(refused).error]).toEqual([401, errors.TOKEN_REVOKED.code])
    expect(json(await call('GET', `/tokens/${id}`))).toMatchObject({ status: 'revoked' })
    // Revoking again changes nothing and succeeds, as `token revoke` does; the revocation time stays.
    const revokedAt = json(await call('GET', `/tokens/${id}`)).revokedAt
    expect((await call('DELETE', `/tokens/${id}`)).statusCode).toBe(204)
    expect(json(await call('GET', `/tokens/${id}`)).revokedAt).toBe(revokedAt)
  })

  it('pages the listing, oldest first, with a Link to the next page and none after the last', async () => {
    const { t, call } = await setUp()
    for (let i = 0; i < 4; i++) await t.token(['plants:read'])
    const all = (await t.store.tokens.list()).map((token) => token.id)
    expect(all).toHaveLength(5)
    const seen: string[] = []
    let url: string | undefined = '/tokens?limit=2'
    let pages = 0
    while (url !== undefined) {
      const page = await call('GET', url)
      expect(page.statusCode).toBe(200)
      seen.push(...(json(page).data as Array<{ id: string }>).map((token) => token.id))
      const link = page.headers.link as string | undefined
      url = link === undefined ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1]
      if (link !== undefined) expect(url).toMatch(/^\/tokens\?limit=2&after=\d+\.[0-9a-f]{16}$/)
      pages++
    }
    expect(seen).toEqual(all)
    expect(pages).toBe(3)
    for (const bad of ['limit=0', 'limit=501', 'after=x', 'after=1.ZZ', 'limit=1&limit=2']) {
      const res = await call('GET', `/tokens?${bad}`)
      expect([bad, res.statusCode, errorOf(res).error]).toEqual([bad, 400, errors.QUERY_INVALID.code])
    }
  })

  it('refuses each problem precisely: no token, no tokens:manage, an unknown id', async () => {
    const { t, call } = await setUp()
    const none = await t.app.inject({ url: '/tokens' })
    expect([none.statusCode, errorOf(none).error]).toEqual([401, errors.TOKEN_MISSING.code])
    expect(none.headers['www-authenticate']).toBe('Bearer realm="plantstore"')

    const reader = await t.token([...SCOPES].filter((scope) => scope !== 'tokens:manage'))
    for (const [method, url, body] of [
      ['GET', '/tokens'],
      ['POST', '/tokens', { name: 'x', scopes: ['plants:read'] }],
      ['POST', '/tokens/0123456789abcdef/roll', {}],
      ['DELETE', '/tokens/0123456789abcdef'],
    ] as const) {
      const res = await call(method, url, body, reader)
      expect([url, res.statusCode, errorOf(res).error]).toEqual([url, 403, errors.SCOPE_MISSING.code])
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="plantstore", error="insufficient_scope", scope="tokens:manage"',
      )
    }

    for (const [method, url, body] of [
      ['GET', '/tokens/0123456789abcdef'],
      ['GET', '/tokens/not-an-id'],
      ['DELETE', '/tokens/0123456789abcdef'],
      ['POST', '/tokens/0123456789abcdef/roll', {}],
    ] as const) {
      const res = await call(method, url, body)
      expect([url, res.statusCode, errorOf(res).error]).toEqual([url, 404, errors.TOKEN_NOT_FOUND.code])
    }
  })

  it('refuses bad bodies with the field code and the words `token create` uses', async () => {
    const { t, call } = await setUp()
    const leaked = await t.token(['plants:read'])
    const cases: Array<[unknown, typeof errors.TOKEN_NAME_INVALID, string?]> = [
      [{ scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID, 'expected a string'],
      [{ name: ' ', scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID, 'expected 1 to 100 characters'],
      [{ name: 'x'.repeat(101), scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID],
      [{ name: 'a\tb', scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID, 'control characters'],
      [{ name: 'a\u202eb', scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID, 'bidirectional'],
      [{ name: `deploy ${leaked}`, scopes: ['plants:read'] }, errors.TOKEN_NAME_INVALID, 'it holds a token'],
      [{ name: 'x' }, errors.TOKEN_SCOPES_INVALID, 'required'],
      [{ name: 'x', scopes: [] }, errors.TOKEN_SCOPES_INVALID],
      [{ name: 'x', scopes: 'plants:read' }, errors.TOKEN_SCOPES_INVALID],
      [{ name: 'x', scopes: ['plants:everything'] }, errors.TOKEN_SCOPES_INVALID, 'tokens:manage'],
      [{ name: 'x', scopes: ['plants:read'], expiresIn: 'soon' }, errors.TOKEN_EXPIRES_IN_INVALID],
      [{ name: 'x', scopes: ['plants:read'], expiresIn: '999ms' }, errors.TOKEN_EXPIRES_IN_INVALID],
      [{ name: 'x', scopes: ['plants:read'], expiresIn: 3600 }, errors.TOKEN_EXPIRES_IN_INVALID],
      [{ name: 'x', scopes: ['plants:read'], rateLimit: '0/1s' }, errors.TOKEN_RATE_LIMIT_INVALID],
      [{ name: 'x', scopes: ['plants:read'], rateLimit: { count: 1 } }, errors.TOKEN_RATE_LIMIT_INVALID],
      [{ name: 'x', scopes: ['plants:read'], rateLimit: '5/25d' }, errors.TOKEN_RATE_LIMIT_INVALID],
    ]
    for (const [body, entry, words] of cases) {
      const res = await call('POST', '/tokens', body)
      expect([body, res.statusCode, errorOf(res).error]).toEqual([body, 400, entry.code])
      if (words) expect(errorOf(res).message).toContain(words)
      // A token given as the name is not repeated in the answer.
      expect(res.body).not.toContain(leaked.slice(21))
    }
    for (const [body, status, entry] of [
      ['', 400, errors.BODY_MISSING],
      ['{"name":', 400, errors.BODY_MALFORMED],
      ['[]', 400, errors.BODY_NOT_OBJECT],
    ] as const) {
      const res = await call('POST', '/tokens', body)
      expect([body, res.statusCode, errorOf(res).error]).toEqual([body, status, entry.code])
    }
    const id = leaked.slice(4, 20)
    for (const overlap of ['forever', '31d', '-1s', 5]) {
      const res = await call('POST', `/tokens/${id}/roll`, { overlap })
      expect([overlap, res.statusCode, errorOf(res).error]).toEqual([
        overlap,
        400,
        errors.TOKEN_OVERLAP_INVALID.code,
      ])
    }
    // Nothing was issued by any of them.
    expect(await t.store.tokens.list()).toHaveLength(2)
  })

  it('lets a token grant and roll only what it holds itself', async () => {
    const { t, call } = await setUp()
    // The caller holds tokens:manage and plants:read/write, not webhooks:manage nor metrics:read.
    const escalation = await call('POST', '/tokens', {
      name: 'wider',
      scopes: ['plants:read', 'webhooks:manage', 'metrics:read'],
    })
    expect([escalation.statusCode, errorOf(escalation).error]).toEqual([403, errors.SCOPE_NOT_GRANTABLE.code])
    expect(errorOf(escalation).message).toContain('webhooks:manage, metrics:read')
    expect(escalation.headers['www-authenticate']).toBe(
      'Bearer realm="plantstore", error="insufficient_scope", scope="webhooks:manage metrics:read"',
    )
    const narrower = await call('POST', '/tokens', { name: 'narrower', scopes: ['plants:read'] })
    expect(narrower.statusCode).toBe(201)
    // A token may issue another with tokens:manage, which still holds no more than it.
    expect((await call('POST', '/tokens', { name: 'deputy', scopes: ['tokens:manage'] })).statusCode).toBe(
      201,
    )

    const wide = await t.tokens.create('wide', ['plants:read', 'metrics:read'])
    const roll = await call('POST', `/tokens/${wide.record.id}/roll`, { overlap: '0s' })
    expect([roll.statusCode, errorOf(roll).error]).toEqual([403, errors.ROLL_SCOPE_NOT_HELD.code])
    expect(roll.headers['www-authenticate']).toBe(
      'Bearer realm="plantstore", error="insufficient_scope", scope="metrics:read"',
    )
    // Refused, it changed nothing: the token's secret still works.
    const scrape = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${wide.token}` } })
    expect(scrape.statusCode).toBe(200)
    // Revoking takes access away, and needs no more than tokens:manage.
    expect((await call('DELETE', `/tokens/${wide.record.id}`)).statusCode).toBe(204)
    const nothing = await call('POST', '/tokens', { name: 'x', scopes: ['plants:read'] }, wide.token)
    expect(nothing.statusCode).toBe(401)
  })

  it('rolls a token: the old secret works until the overlap ends, and then not', async () => {
    let clock = Date.now()
    const { call, listPlants } = await setUp({ now: () => clock })
    const old = json(await call('POST', '/tokens', { name: 'app', scopes: ['plants:read'] })).secret as string
    const id = old.slice(4, 20)
    expect((await listPlants(old)).statusCode).toBe(200)

    const rolled = await call('POST', `/tokens/${id}/roll`, {})
    expect(rolled.statusCode).toBe(200)
    const body = json(rolled)
    const fresh = body.secret as string
    expect(fresh).toMatch(TOKEN_SHAPE)
    expect(fresh).not.toBe(old)
    expect(fresh.slice(0, 21)).toBe(old.slice(0, 21))
    // The default overlap: 24 hours.
    expect(Date.parse(body.previousSecretExpiresAt as string) - Date.now()).toBeGreaterThan(23.9 * HOUR)
    expect(json(await call('GET', `/tokens/${id}`)).previousSecretExpiresAt).toBe(
      body.previousSecretExpiresAt,
    )

    expect((await listPlants(fresh)).statusCode).toBe(200)
    expect((await listPlants(old)).statusCode).toBe(200)
    clock += 24 * HOUR - 1000
    expect((await listPlants(old)).statusCode).toBe(200)
    clock += 2000
    const refused = await listPlants(old)
    expect([refused.statusCode, errorOf(refused).error]).toEqual([401, errors.TOKEN_UNKNOWN.code])
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"')
    expect((await listPlants(fresh)).statusCode).toBe(200)

    // A roll with no overlap ends the old secret at once, even one this process remembers.
    const again = json(await call('POST', `/tokens/${id}/roll`, { overlap: '0s' }))
    expect(again.previousSecretExpiresAt).toBeNull()
    const stopped = await listPlants(fresh)
    expect([stopped.statusCode, errorOf(stopped).error]).toEqual([401, errors.TOKEN_UNKNOWN.code])
    expect((await listPlants(again.secret as string)).statusCode).toBe(200)
  })

  it('keeps one previous secret at most: a roll during an overlap ends the one before at once', async () => {
    const { call, listPlants } = await setUp()
    const first = json(await call('POST', '/tokens', { name: 'app', scopes: ['plants:read'] }))
      .secret as string
    const id = first.slice(4, 20)
    expect((await listPlants(first)).statusCode).toBe(200)
    const second = json(await call('POST', `/tokens/${id}/roll`, { overlap: '1h' })).secret as string
    expect((await listPlants(second)).statusCode).toBe(200)
    expect((await listPlants(first)).statusCode).toBe(200)
    const third = json(await call('POST', `/tokens/${id}/roll`, { overlap: '1h' })).secret as string
    expect((await listPlants(first)).statusCode).toBe(401)
    expect((await listPlants(second)).statusCode).toBe(200)
    expect((await listPlants(third)).statusCode).toBe(200)
    // Revoking stops every secret of the token, the overlapping one too.
    expect((await call('DELETE', `/tokens/${id}`)).statusCode).toBe(204)
    for (const secret of [second, third]) {
      const res = await listPlants(secret)
      expect([res.statusCode, errorOf(res).error]).toEqual([401, errors.TOKEN_REVOKED.code])
    }
  })

  it('ends an overlap with the token: a previous secret never outlives its token', async () => {
    let clock = Date.now()
    const { call, listPlants } = await setUp({ now: () => clock })
    const old = json(await call('POST', '/tokens', { name: 'app', scopes: ['plants:read'], expiresIn: '1h' }))
    const id = old.id as string
    const rolled = json(await call('POST', `/tokens/${id}/roll`, { overlap: '24h' }))
    expect(rolled.previousSecretExpiresAt).toBe(old.expiresAt)
    expect((await listPlants(old.secret as string)).statusCode).toBe(200)
    clock += HOUR + 1000
    for (const secret of [old.secret, rolled.secret] as string[]) {
      const res = await listPlants(secret)
      expect([res.statusCode, errorOf(res).error]).toEqual([401, errors.TOKEN_EXPIRED.code])
    }
  })

  it('shows an overlap only while it runs, and a limit in milliseconds as it was given', async () => {
    const { call } = await setUp()
    const created = json(
      await call('POST', '/tokens', { name: 'app', scopes: ['plants:read'], rateLimit: '10/1500ms' }),
    )
    expect(created.rateLimit).toBe('10/1500ms')
    const id = created.id as string
    const rolled = json(await call('POST', `/tokens/${id}/roll`, { overlap: '1s' }))
    expect(rolled.previousSecretExpiresAt).not.toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const read = json(await call('GET', `/tokens/${id}`))
    expect([read.previousSecretExpiresAt, read.rateLimit]).toEqual([null, '10/1500ms'])
  })

  it('refuses a name holding a lone surrogate, which no UTF-8 text can store', async () => {
    const { call } = await setUp()
    const res = await call('POST', '/tokens', '{"name": "a\\ud800b", "scopes": ["plants:read"]}')
    expect([res.statusCode, errorOf(res).error]).toEqual([400, errors.TOKEN_NAME_INVALID.code])
    expect(errorOf(res).message).toContain('lone surrogates')
  })

  it('rolls no revoked or expired token: it has no secret to hand out', async () => {
    const { t, call } = await setUp()
    const revoked = await t.tokens.create('gone', ['plants:read'])
    await t.tokens.revoke(revoked.record.id)
    const expired = await t.tokens.create('old', ['plants:read'], -1000)
    for (const id of [revoked.record.id, expired.record.id]) {
      const res = await call('POST', `/tokens/${id}/roll`, {})
      expect([res.statusCode, errorOf(res).error]).toEqual([404, errors.TOKEN_NOT_ACTIVE.code])
    }
    expect((await t.store.tokens.find(revoked.record.id))?.secretHash).toBe(revoked.record.secretHash)
  })

  it('writes no secret into the log, even at trace level', async () => {
    const { lines, stream } = captureLines()
    const { t, call } = await setUp({ logger: createLogger('trace', stream) })
    const created = json(await call('POST', '/tokens', { name: 'logged', scopes: ['plants:read'] }))
    const rolled = json(await call('POST', `/tokens/${created.id}/roll`, { overlap: '1m' }))
    await call('GET', '/tokens')
    await call('GET', `/tokens/${created.id}`)
    await call('POST', '/tokens', { name: `oops ${rolled.secret}`, scopes: ['plants:read'] })
    await call('DELETE', `/tokens/${created.id}`)
    await t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${rolled.secret}` } })
    expect(lines.length).toBeGreaterThan(5)
    const log = lines.join('')
    for (const secret of [created.secret, rolled.secret] as string[])
      expect(log).not.toContain(secret.slice(21))
    expect(log).toContain(`/tokens/${created.id}/roll`)
  })
})

describe.each(storeKinds)('a token with its own rate limit on $name', (kind) => {
  const open: TestApp[] = []
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close()
  })
  // The limits here are per minute: a test that ran across a minute's end would count in two windows.
  beforeEach(async () => {
    const left = 60_000 - (Date.now() % 60_000)
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
  })

  const scopes: Scope[] = ['plants:read', 'tokens:manage']

  async function spend(t: TestApp, token: string, count: number): Promise<LightMyRequestResponse[]> {
    const answers: LightMyRequestResponse[] = []
    for (let i = 0; i < count; i++) {
      answers.push(await t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } }))
    }
    return answers
  }

  it.each([
    ['no service-wide limit', null],
    ['a higher service-wide limit', { max: 100, windowMs: 60_000 }],
  ])('is held to it with %s, and its RateLimit headers say so', async (_what, rateLimit) => {
    const t = await makeApp(kind, { rateLimit })
    open.push(t)
    const admin = await t.token(scopes)
    const created = await t.app.inject({
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: { name: 'limited', scopes: ['plants:read'], rateLimit: '3/1m' },
    })
    const limited = (created.json() as { secret: string }).secret
    const answers = await spend(t, limited, 4)
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 429])
    expect(answers[0]?.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '2' })
    const refused = answers[3] as LightMyRequestResponse
    expect(errorOf(refused).error).toBe(errors.RATE_LIMITED.code)
    expect(errorOf(refused).message).toContain('at most 3 per 60s')
    expect(refused.headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '0' })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    // Another token, without a limit of its own, is held to the service-wide one alone.
    const other = await spend(t, await t.token(['plants:read']), 5)
    expect(other.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200])
    if (rateLimit === null) expect(other[0]?.headers['ratelimit-limit']).toBeUndefined()
    else expect(other[0]?.headers['ratelimit-limit']).toBe('100')
  })

  it('overrides a lower service-wide limit too, and a roll keeps it', async () => {
    const t = await makeApp(kind, { rateLimit: { max: 1, windowMs: 60_000 } })
    open.push(t)
    const own = await t.tokens.create('own', ['plants:read', 'tokens:manage'], undefined, {
      max: 5,
      windowMs: 60_000,
    })
    const answers = await spend(t, own.token, 4)
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200])
    const rolled = await t.app.inject({
      method: 'POST',
      url: `/tokens/${own.record.id}/roll`,
      headers: { authorization: `Bearer ${own.token}`, 'content-type': 'application/json' },
      payload: { overlap: '0s' },
    })
    // The fifth request of the window was the roll; the count is the token's, whatever its secret.
    expect(rolled.statusCode).toBe(200)
    expect((rolled.json() as { rateLimit: string }).rateLimit).toBe('5/1m')
    const after = await spend(t, (rolled.json() as { secret: string }).secret, 1)
    expect(after[0]?.statusCode).toBe(429)
  })
})

describe.each(storeKinds)('a token made over HTTP on $name', (kind) => {
  const open: TestApp[] = []
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close()
  })

  const manage: Scope[] = ['plants:read', 'tokens:manage']
  const idOf = (token: string) => TOKEN_SHAPE.exec(token)?.[1] as string

  async function setUp(options: Parameters<typeof makeApp>[1] = {}) {
    const t = await makeApp(kind, options)
    open.push(t)
    const call = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      })
    const make = (maker: string, body: Record<string, unknown> = {}) =>
      call(maker, 'POST', '/tokens', { name: 'made', scopes: ['plants:read'], ...body })
    return { t, call, make }
  }

  const refusedAsOutliving = (res: LightMyRequestResponse) =>
    expect([res.statusCode, errorOf(res).error]).toEqual([403, errors.TOKEN_OUTLIVES_MAKER.code])

  it('expires no later than its maker: with it when no expiry is asked, and never after it', async () => {
    const clock = Date.now()
    const { t, make } = await setUp({ now: () => clock })
    const maker = await t.token(manage, HOUR)
    const makerExpiry = new Date(clock + HOUR).toISOString()
    for (const body of [{}, { expiresIn: null }]) {
      const inherited = await make(maker, body)
      expect(inherited.statusCode).toBe(201)
      expect((inherited.json() as { expiresAt: string }).expiresAt).toBe(makerExpiry)
    }
    const shorter = await make(maker, { expiresIn: '30m' })
    expect((shorter.json() as { expiresAt: string }).expiresAt).toBe(new Date(clock + HOUR / 2).toISOString())
    expect((await make(maker, { expiresIn: '1h' })).statusCode).toBe(201)
    const later = await make(maker, { expiresIn: '61m' })
    refusedAsOutliving(later)
    expect(errorOf(later).message).toContain(makerExpiry)
    // Nothing was issued by the refusal.
    expect(await t.store.tokens.list()).toHaveLength(5)
    // A maker that never expires makes tokens that never do, unless asked.
    const forever = await t.token(manage)
    expect((await make(forever)).json()).toMatchObject({ expiresAt: null })
    expect((await make(forever, { expiresIn: '36500d' })).statusCode).toBe(201)
    // A token made by a made token is held to the same bound.
    const child = (await make(maker, { scopes: manage })).json() as { secret: string }
    refusedAsOutliving(await make(child.secret, { expiresIn: '2h' }))
  })

  it('is allowed no more requests than its maker: its own limit, or the service-wide one', async () => {
    const { t, make } = await setUp({ rateLimit: { max: 100, windowMs: 60_000 } })
    const limited = (await t.tokens.create('limited', manage, undefined, { max: 10, windowMs: 1000 })).token
    expect((await make(limited)).json()).toMatchObject({ rateLimit: '10/1s' })
    for (const within of ['10/1s', '5/1s', '10/2s', '1/1d'])
      expect([within, (await make(limited, { rateLimit: within })).statusCode]).toEqual([within, 201])
    // More at once, or faster over time: 600/1m is the same rate as 10/1s with a burst of 600.
    for (const looser of ['11/1s', '600/1m', '10/999ms']) {
      const res = await make(limited, { rateLimit: looser })
      refusedAsOutliving(res)
      expect(errorOf(res).message).toContain('10/1s')
    }
    // A maker without a limit of its own is held to --rate-limit, and what it makes is too.
    const plain = await t.token(manage)
    expect((await make(plain)).json()).toMatchObject({ rateLimit: null })
    expect((await make(plain, { rateLimit: '100/1m' })).statusCode).toBe(201)
    refusedAsOutliving(await make(plain, { rateLimit: '101/1m' }))
  })

  it('may be given any limit by a maker that has none, with no service-wide limit', async () => {
    const { t, make } = await setUp()
    const plain = await t.token(manage)
    expect((await make(plain, { rateLimit: '999999999/1ms' })).statusCode).toBe(201)
  })

  it('records its maker, shown in every view of it and logged at info', async () => {
    const { lines, stream } = captureLines()
    const { t, call, make } = await setUp({ logger: createLogger('info', stream) })
    const maker = await t.token(manage)
    const created = (await make(maker)).json() as { id: string }
    const createdBy = { tokenId: idOf(maker) }
    expect(created).toMatchObject({ createdBy })
    expect((await call(maker, 'GET', `/tokens/${created.id}`)).json()).toMatchObject({ createdBy })
    const listed = (await call(maker, 'GET', '/tokens')).json() as {
      data: Array<{ id: string; createdBy: unknown }>
    }
    expect(listed.data.find((token) => token.id === created.id)?.createdBy).toEqual(createdBy)
    // One made on the database host has no maker.
    expect(listed.data.find((token) => token.id === idOf(maker))?.createdBy).toBeNull()
    const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'token created')
    expect(logged).toMatchObject({ level: 30, tokenId: created.id, createdBy })
    expect(lines.join('')).not.toContain(maker.slice(21))
  })

  it('is rolled only by a token it does not outlive nor outrank, as rolling hands out its secret', async () => {
    const { t, call, make } = await setUp()
    const short = await t.token(manage, HOUR)
    const forever = await t.tokens.create('forever', ['plants:read'])
    refusedAsOutliving(await call(short, 'POST', `/tokens/${forever.record.id}/roll`, {}))
    const own = (await make(short)).json() as { id: string }
    expect((await call(short, 'POST', `/tokens/${own.id}/roll`, {})).statusCode).toBe(200)
    // A limited roller cannot roll a token without a limit, nor one with a looser limit.
    const limited = (await t.tokens.create('limited', manage, undefined, { max: 5, windowMs: 60_000 })).token
    refusedAsOutliving(await call(limited, 'POST', `/tokens/${forever.record.id}/roll`, {}))
    const looser = await t.tokens.create('looser', ['plants:read'], undefined, { max: 6, windowMs: 60_000 })
    refusedAsOutliving(await call(limited, 'POST', `/tokens/${looser.record.id}/roll`, {}))
    const tighter = await t.tokens.create('tighter', ['plants:read'], undefined, { max: 1, windowMs: 60_000 })
    expect((await call(limited, 'POST', `/tokens/${tighter.record.id}/roll`, {})).statusCode).toBe(200)
    // Refused, the roll changed nothing: the secret still works.
    const res = await t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${forever.token}` } })
    expect(res.statusCode).toBe(200)
  })

  it('is revoked with its maker, and what it made with it, but not its maker with it', async () => {
    const { t, call, make } = await setUp()
    const root = await t.token(manage)
    const child = ((await make(root, { scopes: manage })).json() as { secret: string }).secret
    const grandchild = ((await make(child, { scopes: manage })).json() as { secret: string }).secret
    const sibling = ((await make(root)).json() as { secret: string }).secret
    const works = async (token: string) =>
      (await t.app.inject({ url: '/plants', headers: { authorization: `Bearer ${token}` } })).statusCode
    expect((await call(root, 'DELETE', `/tokens/${idOf(child)}`)).statusCode).toBe(204)
    expect(await works(child)).toBe(401)
    expect(await works(grandchild)).toBe(401)
    expect((await call(root, 'GET', `/tokens/${idOf(grandchild)}`)).json()).toMatchObject({
      status: 'revoked',
    })
    expect(await works(root)).toBe(200)
    expect(await works(sibling)).toBe(200)
    // The store says so to `token revoke` as well: the maker was revoked now, its tokens with it.
    expect(await t.tokens.revoke(idOf(root))).toBe('revoked')
    expect(await works(sibling)).toBe(401)
    expect(await t.tokens.revoke(idOf(root))).toBe('already-revoked')
  })
})
