import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { createJwtVerifier } from '../../src/tokens/jwt.js'
import { errorOf, makeApp, type TestApp } from '../helpers/app.js'
import { AUDIENCE, ISSUER, type JwksServer, serveJwks, signingKey, signJwt } from '../helpers/jwks.js'
import { sqliteKind } from '../helpers/stores.js'

const me = (t: TestApp, token?: string) =>
  t.app.inject({
    method: 'GET',
    url: '/me',
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  })

describe('GET /me: who the caller is and what it may do', () => {
  let t: TestApp
  let jwks: JwksServer
  let key: Awaited<ReturnType<typeof signingKey>>
  beforeAll(async () => {
    key = await signingKey('ES256', 'ec-me')
    jwks = await serveJwks([key])
    t = await makeApp(sqliteKind, {
      jwts: createJwtVerifier({
        jwksUrl: jwks.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        scopeClaim: 'scope',
        clockToleranceMs: 0,
      }),
    })
  })
  afterAll(async () => {
    await t?.close()
    await jwks?.close()
  })

  it('names an opaque token by its public id and name, with its scopes sorted, whatever they are', async () => {
    const made = await t.tokens.create('reader', ['plants:write', 'events:read'])
    const res = await me(t, made.token)
    expect(res.statusCode).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toEqual({
      actor: { tokenId: made.record.id },
      name: 'reader',
      scopes: ['events:read', 'plants:write'],
      expiresAt: null,
    })
    const none = await t.tokens.create('nothing', [])
    expect((await me(t, none.token)).json()).toMatchObject({ name: 'nothing', scopes: [] })
  })

  it('gives the expiry of a token that has one', async () => {
    const made = await t.tokens.create('brief', ['plants:read'], 3_600_000)
    const body = (await me(t, made.token)).json() as { expiresAt: string }
    expect(body.expiresAt).toBe(made.record.expiresAt?.toISOString())
  })

  it('names a JWT by its issuer and subject, with the scopes of its claim', async () => {
    const jwt = await signJwt(key, { sub: 'ada', scope: 'openid plants:read' })
    const body = (await me(t, jwt)).json() as Record<string, unknown>
    expect(body.actor).toEqual({ iss: ISSUER, sub: 'ada' })
    expect(body.name).toBe('ada')
    expect(body.scopes).toEqual(['plants:read'])
    expect(typeof body.expiresAt).toBe('string')
  })

  it('refuses a request without a valid token, as every operation does', async () => {
    const missing = await me(t)
    expect([missing.statusCode, errorOf(missing).error]).toEqual([401, errors.TOKEN_MISSING.code])
    const revoked = await t.tokens.create('gone', ['plants:read'])
    await t.tokens.revoke(revoked.record.id)
    const refused = await me(t, revoked.token)
    expect([refused.statusCode, errorOf(refused).error]).toEqual([401, errors.TOKEN_REVOKED.code])
  })

  it('allows only GET and HEAD', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/me' })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD')
  })
})
