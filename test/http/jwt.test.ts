import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { CompactSign, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { createJwtVerifier, type JwtSettings, subjectKey } from '../../src/tokens/jwt.js'
import { errorOf, makeApp, postPlant, type TestApp } from '../helpers/app.js'
import {
  AUDIENCE,
  handBuiltJwt,
  ISSUER,
  type JwksServer,
  type SigningKey,
  serveJwks,
  signingKey,
  signJwt,
} from '../helpers/jwks.js'
import { captureLines } from '../helpers/log.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'

const settings = (jwksUrl: string): JwtSettings => ({
  jwksUrl,
  issuer: ISSUER,
  audience: AUDIENCE,
  scopeClaim: 'scope',
  clockToleranceMs: 0,
})

const get = (t: TestApp, token: string, url = '/plants') =>
  t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })

/** Asserts a 401 with the code of `entry` and RFC 6750's invalid_token challenge naming it. */
function expectRefused(res: Awaited<ReturnType<typeof get>>, entry: { code: number; message: string }): void {
  expect(res.statusCode).toBe(401)
  expect(errorOf(res)).toEqual({ error: entry.code, message: entry.message })
  expect(res.headers['www-authenticate']).toBe(
    `Bearer realm="plantstore", error="invalid_token", error_description="${entry.message}"`,
  )
}

describe.each(storeKinds)('JWT bearer tokens on $name', (kind) => {
  let jwks: JwksServer
  let t: TestApp
  const keys: Record<string, SigningKey> = {}

  beforeAll(async () => {
    keys.RS256 = await signingKey('RS256', 'rsa-1')
    keys.ES256 = await signingKey('ES256', 'ec-1')
    keys.EdDSA = await signingKey('EdDSA', 'ed-1')
    jwks = await serveJwks(Object.values(keys))
    t = await makeApp(kind, { jwts: createJwtVerifier(settings(jwks.url)) })
  })
  afterAll(async () => {
    await t?.close()
    await jwks?.close()
  })

  it.each([
    ['RS256', 1],
    ['ES256', 2],
    ['EdDSA', 3],
  ])('accepts a good %s token with the scopes of its claim', async (alg, id) => {
    const key = keys[alg] as SigningKey
    const token = await signJwt(key, { sub: `writer-${alg}`, scope: 'openid plants:read plants:write' })
    expect((await get(t, token)).statusCode).toBe(200)
    const created = await postPlant(t.app, token, `{"id": ${id}, "name": "a"}`)
    expect(created.statusCode).toBe(200)
    // A scope the claim does not hold is refused as for an opaque token.
    const metrics = await get(t, token, '/metrics')
    expect(metrics.statusCode).toBe(403)
    expect(errorOf(metrics).error).toBe(errors.SCOPE_MISSING.code)
    expect(metrics.headers['www-authenticate']).toBe(
      'Bearer realm="plantstore", error="insufficient_scope", scope="metrics:read"',
    )
  })

  it('reads scopes from an array as well, and ignores names it does not know', async () => {
    const token = await signJwt(keys.ES256 as SigningKey, { scope: ['metrics:read', 'plants:admin', 7] })
    expect((await get(t, token, '/metrics')).statusCode).toBe(200)
    expect((await get(t, token)).statusCode).toBe(403)
  })

  it('answers 403 to a token without the scope claim, and reads the claim the settings name', async () => {
    const token = await signJwt(keys.RS256 as SigningKey, { permissions: ['plants:read'] })
    expect((await get(t, token)).statusCode).toBe(403)
    const { store } = t
    const other = await makeApp(kind, {
      jwts: createJwtVerifier({ ...settings(jwks.url), scopeClaim: 'permissions' }),
    })
    try {
      expect(store).not.toBe(other.store)
      expect((await get(other, token)).statusCode).toBe(200)
    } finally {
      await other.close()
    }
  })

  it('counts every token of a subject as one: an Idempotency-Key replays across its tokens', async () => {
    const first = await signJwt(keys.RS256 as SigningKey, {
      sub: 'replayer',
      scope: 'plants:write',
      jti: 'a',
    })
    const second = await signJwt(keys.EdDSA as SigningKey, {
      sub: 'replayer',
      scope: 'plants:write',
      jti: 'b',
    })
    const body = '{"id": 7001, "name": "once"}'
    const a = await postPlant(t.app, first, body, { 'idempotency-key': 'k-1' })
    const b = await postPlant(t.app, second, body, { 'idempotency-key': 'k-1' })
    expect(a.statusCode).toBe(200)
    expect(b.statusCode).toBe(200)
    expect(b.headers['idempotent-replayed']).toBe('true')
    // Another subject's same key is its own.
    const stranger = await signJwt(keys.RS256 as SigningKey, { sub: 'stranger', scope: 'plants:write' })
    const c = await postPlant(t.app, stranger, body, { 'idempotency-key': 'k-1' })
    expect(c.statusCode).toBe(409)
    expect(subjectKey(ISSUER, 'replayer')).toMatch(/^jwt_[0-9a-f]{32}$/)
    expect(subjectKey(ISSUER, 'x'.repeat(5000))).toHaveLength(36)
  })

  it('refuses an expired token (40104)', async () => {
    const token = await signJwt(keys.RS256 as SigningKey, { exp: Math.floor(Date.now() / 1000) - 5 })
    expectRefused(await get(t, token), errors.TOKEN_EXPIRED)
  })

  it('refuses a token that is not valid yet', async () => {
    const token = await signJwt(keys.ES256 as SigningKey, { nbf: Math.floor(Date.now() / 1000) + 120 })
    expectRefused(await get(t, token), errors.JWT_NOT_YET_VALID)
  })

  it('refuses a token of another issuer, or of none', async () => {
    const key = keys.EdDSA as SigningKey
    expectRefused(
      await get(t, await signJwt(key, { iss: 'https://evil.example.test' })),
      errors.JWT_ISSUER_WRONG,
    )
    expectRefused(await get(t, await signJwt(key, { iss: undefined })), errors.JWT_ISSUER_WRONG)
  })

  it('refuses a token for another audience, and takes one that lists this service among others', async () => {
    const key = keys.RS256 as SigningKey
    expectRefused(await get(t, await signJwt(key, { aud: 'another-api' })), errors.JWT_AUDIENCE_WRONG)
    expectRefused(await get(t, await signJwt(key, { aud: undefined })), errors.JWT_AUDIENCE_WRONG)
    const listed = await signJwt(key, { aud: ['another-api', AUDIENCE], scope: 'plants:read' })
    expect((await get(t, listed)).statusCode).toBe(200)
  })

  it('refuses a token without a subject, or without an expiry', async () => {
    const key = keys.ES256 as SigningKey
    expectRefused(await get(t, await signJwt(key, { sub: undefined })), errors.JWT_SUBJECT_MISSING)
    expectRefused(await get(t, await signJwt(key, { sub: '' })), errors.JWT_SUBJECT_MISSING)
    expectRefused(await get(t, await signJwt(key, { exp: undefined })), errors.JWT_EXPIRY_MISSING)
  })

  it('refuses a token signed by a key the provider does not publish', async () => {
    const stranger = await signingKey('RS256', 'not-published')
    expectRefused(await get(t, await signJwt(stranger)), errors.JWT_KEY_UNKNOWN)
    // The same kid as a published key, but another key: the signature gives it away.
    const impostor = await signingKey('RS256', 'rsa-1')
    expectRefused(await get(t, await signJwt(impostor)), errors.JWT_SIGNATURE_INVALID)
  })

  it('refuses alg none, whatever the token claims', async () => {
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now + 300, scope: 'plants:read' }
    for (const alg of ['none', 'None', 'NONE']) {
      expectRefused(await get(t, handBuiltJwt({ alg, typ: 'JWT' }, claims)), errors.JWT_ALGORITHM_REFUSED)
    }
  })

  it('refuses HS256, even signed with the public key of a published key as the secret', async () => {
    const now = Math.floor(Date.now() / 1000)
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now + 300, scope: 'plants:read' }
    for (const secret of ['some shared secret', JSON.stringify((keys.RS256 as SigningKey).jwk)]) {
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
        .sign(new TextEncoder().encode(secret))
      expectRefused(await get(t, token), errors.JWT_ALGORITHM_REFUSED)
    }
  })

  it('refuses a tampered payload and a tampered signature', async () => {
    const token = await signJwt(keys.ES256 as SigningKey, { scope: 'plants:read' })
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const raised = Buffer.from(JSON.stringify({ ...claims, scope: 'plants:read metrics:read' })).toString(
      'base64url',
    )
    expectRefused(await get(t, `${header}.${raised}.${signature}`), errors.JWT_SIGNATURE_INVALID)
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`
    expectRefused(await get(t, `${header}.${payload}.${flipped}`), errors.JWT_SIGNATURE_INVALID)
  })

  it('refuses JWT-shaped text that is no JWT as malformed', async () => {
    expectRefused(await get(t, 'abc.def.ghi'), errors.JWT_MALFORMED)
    // Signed, but its payload is no claims object.
    const key = keys.RS256 as SigningKey
    const array = await new CompactSign(new TextEncoder().encode('[1, 2]'))
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(key.privateKey)
    expectRefused(await get(t, array), errors.JWT_MALFORMED)
    const token = await signJwt(key, { exp: 'tomorrow' as unknown as number })
    expectRefused(await get(t, token), errors.JWT_MALFORMED)
  })

  it('keeps accepting opaque pst_ tokens beside JWTs, and refusing bad ones as before', async () => {
    const opaque = await t.token(['plants:read'])
    expect((await get(t, opaque)).statusCode).toBe(200)
    expectRefused(await get(t, `pst_0123456789abcdef_${'A'.repeat(43)}`), errors.TOKEN_UNKNOWN)
    expectRefused(await get(t, 'not-a-token'), errors.TOKEN_MALFORMED)
  })

  it('answers a remembered token that has since expired as expired', async () => {
    const token = await signJwt(keys.EdDSA as SigningKey, {
      scope: 'plants:read',
      exp: Math.floor(Date.now() / 1000) + 2,
    })
    expect((await get(t, token)).statusCode).toBe(200)
    expect((await get(t, token)).statusCode).toBe(200)
    await sleep(2100)
    expectRefused(await get(t, token), errors.TOKEN_EXPIRED)
  })
})

describe('the JSON Web Key Set', () => {
  it('is fetched once and cached, and fetched again for a kid it lacks: a key added later is taken', async () => {
    const first = await signingKey('ES256', 'first')
    const jwks = await serveJwks([first])
    const t = await makeApp(sqliteKind, { jwts: createJwtVerifier(settings(jwks.url), { cooldownMs: 200 }) })
    try {
      for (let i = 0; i < 3; i++) {
        const token = await signJwt(first, { scope: 'plants:read', jti: String(i) })
        expect((await get(t, token)).statusCode).toBe(200)
      }
      expect(jwks.fetches).toBe(1)
      // The provider rotates in a new key: its first token names a kid the cached set lacks.
      const added = await signingKey('EdDSA', 'added')
      jwks.keys.push(added.jwk)
      await sleep(250)
      expect((await get(t, await signJwt(added, { scope: 'plants:read' }))).statusCode).toBe(200)
      expect(jwks.fetches).toBe(2)
      // Within the cooldown, made-up kids do not send the service back to the provider.
      const stranger = await signingKey('ES256', 'made-up')
      for (let i = 0; i < 3; i++) {
        expectRefused(await get(t, await signJwt(stranger, { jti: String(i) })), errors.JWT_KEY_UNKNOWN)
      }
      expect(jwks.fetches).toBe(2)
    } finally {
      await t.close()
      await jwks.close()
    }
  })

  it('stops taking a key the provider withdraws once the cached set and the remembered token age out', async () => {
    const key = await signingKey('ES256', 'withdrawn')
    const jwks = await serveJwks([key])
    const t = await makeApp(sqliteKind, { jwts: createJwtVerifier(settings(jwks.url)) })
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const token = await signJwt(key, { scope: 'plants:read', exp: Math.floor(Date.now() / 1000) + 3600 })
      expect((await get(t, token)).statusCode).toBe(200)
      jwks.keys.splice(0)
      // Remembered for a minute: not verified again.
      vi.setSystemTime(Date.now() + 30_000)
      expect((await get(t, token)).statusCode).toBe(200)
      // Verified again, but the set is still the one cached 10 minutes ago.
      vi.setSystemTime(Date.now() + 60_000)
      expect((await get(t, token)).statusCode).toBe(200)
      expect(jwks.fetches).toBe(1)
      // Past the set's cache age it is fetched again, and the key is gone from it.
      vi.setSystemTime(Date.now() + 10 * 60_000)
      expectRefused(await get(t, token), errors.JWT_KEY_UNKNOWN)
      expect(jwks.fetches).toBe(2)
    } finally {
      vi.useRealTimers()
      await t.close()
      await jwks.close()
    }
  })

  it('verifies a token without a kid against the key of the set that signed it', async () => {
    const one = await signingKey('RS256', 'one')
    const two = await signingKey('RS256', 'two')
    const jwks = await serveJwks([one, two])
    const t = await makeApp(sqliteKind, { jwts: createJwtVerifier(settings(jwks.url)) })
    try {
      const token = await signJwt(two, { scope: 'plants:read' }, { kid: undefined })
      expect((await get(t, token)).statusCode).toBe(200)
      const stranger = await signingKey('RS256', 'x')
      expectRefused(
        await get(t, await signJwt(stranger, {}, { kid: undefined })),
        errors.JWT_SIGNATURE_INVALID,
      )
    } finally {
      await t.close()
      await jwks.close()
    }
  })

  it('answers 503 with Retry-After while it cannot be fetched, dropped, timed out or not found, and recovers', async () => {
    const key = await signingKey('ES256', 'k')
    const jwks = await serveJwks([key])
    jwks.down = true
    // A server that takes the connection and never answers.
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/jwks.json`
    // And a provider that answers, but with no key set where the URL says (a wrong path).
    const wrongPath = jwks.url.replace('/jwks.json', '/certs')
    const apps = await Promise.all(
      [jwks.url, silentUrl, wrongPath].map((url) =>
        makeApp(sqliteKind, {
          jwts: createJwtVerifier(settings(url), { timeoutMs: 300, failureCooldownMs: 300 }),
        }),
      ),
    )
    try {
      const token = await signJwt(key, { scope: 'plants:read' })
      for (const t of apps) {
        const res = await get(t, token)
        expect(res.statusCode).toBe(503)
        expect(errorOf(res).error).toBe(errors.UNAVAILABLE.code)
        expect(res.headers['retry-after']).toBe('5')
        expect(res.headers['www-authenticate']).toBeUndefined()
        // Opaque tokens do not depend on the provider.
        expect((await get(t, await t.token(['plants:read']))).statusCode).toBe(200)
      }
      // Back up: the first request after the failure's cool-down fetches the set.
      jwks.down = false
      await sleep(350)
      expect((await get(apps[0] as TestApp, token)).statusCode).toBe(200)
    } finally {
      await Promise.all(apps.map((t) => t.close()))
      silent.closeAllConnections()
      silent.close()
      await jwks.close()
    }
  })
})

describe('a token made by a JWT', () => {
  it('expires with the JWT at the latest, and records its issuer and subject as its maker', async () => {
    const key = await signingKey('ES256', 'k')
    const jwks = await serveJwks([key])
    const t = await makeApp(sqliteKind, { jwts: createJwtVerifier(settings(jwks.url)) })
    try {
      const exp = Math.floor(Date.now() / 1000) + 60
      const jwt = await signJwt(key, { scope: 'tokens:manage plants:read', exp })
      const make = (body: object) =>
        t.app.inject({
          method: 'POST',
          url: '/tokens',
          headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
          payload: { name: 'made', scopes: ['plants:read'], ...body },
        })
      const made = await make({})
      expect(made.statusCode).toBe(201)
      expect(made.json()).toMatchObject({
        expiresAt: new Date(exp * 1000).toISOString(),
        createdBy: { iss: ISSUER, sub: 'alice' },
      })
      const later = await make({ expiresIn: '1h' })
      expect([later.statusCode, errorOf(later).error]).toEqual([403, errors.TOKEN_OUTLIVES_MAKER.code])
      expect((await make({ expiresIn: '30s' })).statusCode).toBe(201)
    } finally {
      await t.close()
      await jwks.close()
    }
  })
})

describe('an identity provider that fails', () => {
  const garbage = async (i: number) =>
    signJwt(await signingKey('ES256', `garbage-${i % 3}`), { jti: String(i) })

  it('is asked once by any number of requests at once, then not again until a cool-down that doubles has passed', async () => {
    const key = await signingKey('ES256', 'k')
    const jwks = await serveJwks([key])
    jwks.failWith = 500
    const t = await makeApp(sqliteKind, {
      jwts: createJwtVerifier(settings(jwks.url), { failureCooldownMs: 400, failureCooldownMaxMs: 800 }),
    })
    try {
      const tokens = await Promise.all(Array.from({ length: 100 }, (_, i) => garbage(i)))
      const statuses = (await Promise.all(tokens.map((token) => get(t, token)))).map((res) => res.statusCode)
      expect(new Set(statuses)).toEqual(new Set([503]))
      expect(jwks.fetches).toBe(1)
      // Within the cool-down no request reaches the provider, a good token's included.
      const good = await signJwt(key, { scope: 'plants:read' })
      for (const token of [...tokens.slice(0, 20), good]) expect((await get(t, token)).statusCode).toBe(503)
      expect(jwks.fetches).toBe(1)
      // Past it, one fetch; it fails again, and the next cool-down is twice as long.
      await sleep(450)
      await Promise.all(tokens.slice(0, 20).map((token) => get(t, token)))
      expect(jwks.fetches).toBe(2)
      await sleep(450)
      expect((await get(t, good)).statusCode).toBe(503)
      expect(jwks.fetches).toBe(2)
      // The longest cool-down is the cap; then the provider is back, and the set is taken.
      await sleep(450)
      jwks.failWith = undefined
      expect((await get(t, good)).statusCode).toBe(200)
      expect(jwks.fetches).toBe(3)
    } finally {
      await t.close()
      await jwks.close()
    }
  })

  it('keeps serving a set fetched within its age while a failed fetch cools down', async () => {
    const key = await signingKey('ES256', 'k')
    const jwks = await serveJwks([key])
    const t = await makeApp(sqliteKind, { jwts: createJwtVerifier(settings(jwks.url), { cooldownMs: 0 }) })
    try {
      expect((await get(t, await signJwt(key, { scope: 'plants:read', jti: 'a' }))).statusCode).toBe(200)
      jwks.failWith = 502
      // An unknown kid sends the service to the provider, which fails: 503, and the failure is remembered.
      expect((await get(t, await garbage(1))).statusCode).toBe(503)
      expect((await get(t, await garbage(2))).statusCode).toBe(503)
      expect(jwks.fetches).toBe(2)
      // A token of a key the cached set holds needs no fetch.
      expect((await get(t, await signJwt(key, { scope: 'plants:read', jti: 'b' }))).statusCode).toBe(200)
    } finally {
      await t.close()
      await jwks.close()
    }
  })

  it("counts each request it refuses for want of keys against its address's unauthenticated limit", async () => {
    const jwks = await serveJwks([])
    jwks.failWith = 500
    const t = await makeApp(sqliteKind, {
      jwts: createJwtVerifier(settings(jwks.url)),
      unauthenticatedRateLimit: { max: 10, windowMs: 60_000 },
    })
    try {
      const tokens = await Promise.all(Array.from({ length: 30 }, (_, i) => garbage(i)))
      const answers = await Promise.all(tokens.map((token) => get(t, token)))
      const count = (status: number) => answers.filter((res) => res.statusCode === status).length
      expect(count(503)).toBe(10)
      expect(count(429)).toBe(20)
      expect(errorOf(answers.find((res) => res.statusCode === 429) as (typeof answers)[0]).error).toBe(
        errors.RATE_LIMITED.code,
      )
      expect(jwks.fetches).toBe(1)
    } finally {
      await t.close()
      await jwks.close()
    }
  })

  it('is logged with its status and a short reason, never its body or a stack', async () => {
    const jwks = await serveJwks([])
    jwks.failWith = 500
    const { lines, stream } = captureLines()
    const t = await makeApp(sqliteKind, {
      jwts: createJwtVerifier(settings(jwks.url)),
      logger: createLogger('info', stream),
    })
    try {
      const res = await t.app.inject({
        url: '/plants',
        headers: { authorization: `Bearer ${await garbage(0)}`, 'x-secret': 'echoed-secret' },
      })
      expect(res.statusCode).toBe(503)
      const line = lines
        .map((text) => JSON.parse(text))
        .find((l) => l.msg === 'identity provider keys unreachable')
      expect(line).toMatchObject({ level: 40, status: 500, reason: 'HTTP 500' })
      expect(line.err).toBeUndefined()
      expect(lines.join('')).not.toContain('provider failed')
      expect(lines.join('')).not.toContain('    at ')
    } finally {
      await t.close()
      await jwks.close()
    }
  })
})

describe('without --jwt-jwks-url', () => {
  it('answers a JWT as any token it does not know the shape of, as before', async () => {
    const key = await signingKey('RS256', 'k')
    const t = await makeApp(sqliteKind)
    try {
      expectRefused(await get(t, await signJwt(key, { scope: 'plants:read' })), errors.TOKEN_MALFORMED)
    } finally {
      await t.close()
    }
  })
})
