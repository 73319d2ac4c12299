import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { BATCH_BODY_LIMIT } from '../../src/plants/batch.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { createJwtVerifier } from '../../src/tokens/jwt.js'
import { SCOPES, type Scope } from '../../src/tokens/scopes.js'
import { errorOf, makeApp, type TestApp } from '../helpers/app.js'
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
import { storeKinds } from '../helpers/stores.js'

// Every error code an operation's document lists is one a client can get from it: these tests get
// each one through the operation itself, and the contract check confirms it is listed there.

const WEBHOOK_ID = 'wh_AAAAAAAAAAAAAAAAAAAAAA'
const DELIVERY_ID = 'dlv_000000000000000000000000'
const TOKEN_ID = 'ffffffffffffffff'

/** A request each operation behind a token would carry out, given a token that may. */
const REQUESTS: Record<string, { method: InjectOptions['method']; url: string; body?: string }> = {
  createPlant: { method: 'POST', url: '/plants', body: '{"id": 2, "name": "b"}' },
  createPlants: { method: 'POST', url: '/plants/batch', body: '{"plants": [{"id": 3, "name": "c"}]}' },
  deletePlants: { method: 'POST', url: '/plants/batch-delete', body: '{"ids": [3]}' },
  listPlants: { method: 'GET', url: '/plants' },
  getPlant: { method: 'GET', url: '/plants/1' },
  replacePlant: { method: 'PUT', url: '/plants/1', body: '{"id": 1, "name": "c"}' },
  updatePlant: { method: 'PATCH', url: '/plants/1', body: '{"name": "d"}' },
  deletePlant: { method: 'DELETE', url: '/plants/1' },
  getPlantHistory: { method: 'GET', url: '/plants/1/history' },
  listChanges: { method: 'GET', url: '/events' },
  metrics: { method: 'GET', url: '/metrics' },
  createWebhook: { method: 'POST', url: '/webhooks', body: '{"url": "https://receiver.example/hook"}' },
  listWebhooks: { method: 'GET', url: '/webhooks' },
  getWebhook: { method: 'GET', url: `/webhooks/${WEBHOOK_ID}` },
  updateWebhook: { method: 'PATCH', url: `/webhooks/${WEBHOOK_ID}`, body: '{"description": "x"}' },
  deleteWebhook: { method: 'DELETE', url: `/webhooks/${WEBHOOK_ID}` },
  rotateWebhookSecret: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/rotate-secret` },
  testWebhook: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/test` },
  listWebhookDeliveries: { method: 'GET', url: `/webhooks/${WEBHOOK_ID}/deliveries` },
  retryWebhookDelivery: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/deliveries/${DELIVERY_ID}/retry` },
  replayWebhook: {
    method: 'POST',
    url: `/webhooks/${WEBHOOK_ID}/replay`,
    body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }),
  },
  listWebhookDeliveryAttempts: {
    method: 'GET',
    url: `/webhooks/${WEBHOOK_ID}/deliveries/${DELIVERY_ID}/attempts`,
  },
  recoverWebhook: {
    method: 'POST',
    url: `/webhooks/${WEBHOOK_ID}/recover`,
    body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }),
  },
  createToken: { method: 'POST', url: '/tokens', body: '{"name": "n", "scopes": ["plants:read"]}' },
  listTokens: { method: 'GET', url: '/tokens' },
  getToken: { method: 'GET', url: `/tokens/${TOKEN_ID}` },
  revokeToken: { method: 'DELETE', url: `/tokens/${TOKEN_ID}` },
  rollToken: { method: 'POST', url: `/tokens/${TOKEN_ID}/roll`, body: '{"overlap": "1h"}' },
  streamChanges: { method: 'GET', url: '/events/stream?after=0' },
  createStreamTicket: { method: 'POST', url: '/events/tickets' },
  getCaller: { method: 'GET', url: '/me' },
}
/**
 * Operations answered from the token alone: no scope to lack, and only authentication reads the store,
 * so it is what meets a broken one.
 */
const TOKEN_ONLY = new Set(['getCaller'])
/**
 * The apps here open no change stream (its response would not end): a stream request that gets
 * through is refused as past --max-streams, after the store has been read.
 */
const NO_STREAMS = { maxStreams: 0 }
const OPERATIONS = Object.keys(REQUESTS)
const BODY_OPERATIONS = OPERATIONS.filter((id) => REQUESTS[id]?.body !== undefined)

function request(operationId: string, headers: Record<string, string>, body?: string): InjectOptions {
  const { method, url, body: usual } = REQUESTS[operationId] as (typeof REQUESTS)[string]
  const payload = body ?? usual
  return {
    method,
    url,
    headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload }),
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The operations the document says need a token, each with the scope it names. */
function tokenOperations(document: unknown): Map<string, Scope | undefined> {
  const paths = (document as { paths: Record<string, Record<string, Record<string, unknown>>> }).paths
  const found = new Map<string, Scope | undefined>()
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const security = operation.security as Array<{ bearerAuth?: Scope[] }> | undefined
      if (security === undefined || security.length === 0) continue
      found.set(operation.operationId as string, security[0]?.bearerAuth?.[0])
    }
  }
  return found
}

describe.each(storeKinds)('every documented error answer on $name', (kind) => {
  let t: TestApp
  let token: string
  /** What GET /metrics throws instead of answering, while set. */
  let scrapeFailure: Error | undefined
  beforeAll(async () => {
    t = await makeApp(kind, {
      ...NO_STREAMS,
      scrapeMetrics: async () => {
        if (scrapeFailure) throw scrapeFailure
        return ''
      },
    })
    token = await t.token([...SCOPES])
  })
  afterAll(() => t.close())

  it('has a request for every operation behind a token', () => {
    expect([...tokenOperations(t.app.swagger()).keys()].sort()).toEqual([...OPERATIONS].sort())
  })

  describe.each(OPERATIONS)('%s', (operationId) => {
    it('answers each token problem with its own 401 code and challenge', async () => {
      const valid = await t.tokens.create('test', [...SCOPES])
      const expired = await t.tokens.create('expired', [...SCOPES], -60_000)
      const revoked = await t.tokens.create('revoked', [...SCOPES])
      await t.tokens.revoke(revoked.record.id)
      const cases: Array<[string, Record<string, string>, typeof errors.TOKEN_MISSING]> = [
        ['no token', {}, errors.TOKEN_MISSING],
        ['a token that is not one', bearer('pst_not-a-token'), errors.TOKEN_MALFORMED],
        ['a token with the wrong secret', bearer(`${valid.token.slice(0, -4)}AAAA`), errors.TOKEN_UNKNOWN],
        ['an expired token', bearer(expired.token), errors.TOKEN_EXPIRED],
        ['a revoked token', bearer(revoked.token), errors.TOKEN_REVOKED],
      ]
      for (const [what, headers, entry] of cases) {
        const res = await t.app.inject(request(operationId, headers))
        expect([what, res.statusCode, errorOf(res).error]).toEqual([what, 401, entry.code])
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="plantstore"/)
      }
    })

    it('answers 403 to a token with every scope but the one it needs', async () => {
      const needed = tokenOperations(t.app.swagger()).get(operationId)
      if (TOKEN_ONLY.has(operationId)) {
        expect(needed).toBeUndefined()
        const res = await t.app.inject(request(operationId, bearer(await t.token([]))))
        expect(res.statusCode).toBe(200)
        return
      }
      const others = SCOPES.filter((scope) => scope !== needed)
      const res = await t.app.inject(request(operationId, bearer(await t.token(others))))
      expect([res.statusCode, errorOf(res).error]).toEqual([403, errors.SCOPE_MISSING.code])
    })

    it.each([
      ['unreachable', () => new StoreUnavailableError('database unreachable: connect ECONNREFUSED'), 503],
      ['failing unexpectedly', () => new Error('a fault'), 500],
    ])('answers the documented error while the database is %s', async (_what, failure, status) => {
      const error = failure()
      // Verified now, so the broken store is met by the operation itself, not by authentication; an
      // operation that reads no store meets it authenticating a token it has not seen before.
      const caller = TOKEN_ONLY.has(operationId) ? await t.token([]) : token
      if (!TOKEN_ONLY.has(operationId)) await t.tokens.verify(token)
      const restore = breakStore(t, error)
      scrapeFailure = error
      try {
        const res = await t.app.inject(request(operationId, bearer(caller)))
        const entry = status === 503 ? errors.UNAVAILABLE : errors.INTERNAL
        expect([res.statusCode, errorOf(res).error]).toEqual([status, entry.code])
        if (status === 503) expect(res.headers['retry-after']).toBe('1')
      } finally {
        restore()
        scrapeFailure = undefined
      }
    })
  })

  describe.each(BODY_OPERATIONS)('%s', (operationId) => {
    it.each([
      ['no body', '', 400, errors.BODY_MISSING],
      ['a body that is not JSON', '{"id": 1,', 400, errors.BODY_MALFORMED],
      ['a body that is not an object', '[1]', 400, errors.BODY_NOT_OBJECT],
      // Past the batch operations' own limit too, which is above the service-wide one.
      [
        'a body too large',
        JSON.stringify({ name: 'x'.repeat(BATCH_BODY_LIMIT) }),
        413,
        errors.BODY_TOO_LARGE,
      ],
    ])('refuses %s', async (_what, body, status, entry) => {
      const res = await t.app.inject(request(operationId, bearer(token), body))
      expect([res.statusCode, errorOf(res).error]).toEqual([status, entry.code])
    })

    it('refuses a body that is not JSON by its media type', async () => {
      const options = request(operationId, bearer(token))
      const res = await t.app.inject({
        ...options,
        headers: { ...options.headers, 'content-type': 'text/plain' },
      })
      expect([res.statusCode, errorOf(res).error]).toEqual([415, errors.UNSUPPORTED_MEDIA_TYPE.code])
    })
  })

  it.each([
    ['updatePlant', '{"id": "1"}', errors.ID_INVALID],
    ['updatePlant', '{"name": ""}', errors.NAME_LENGTH],
    ['updatePlant', '{"name": "a\\u0001"}', errors.TEXT_CHARACTERS],
    ['replacePlant', '{"id": 1, "name": "a", "tag": ""}', errors.TAG_LENGTH],
    ['replacePlant', '{"id": 1, "name": "a\\u0000"}', errors.TEXT_CHARACTERS],
    ['updateWebhook', '{"events": []}', errors.WEBHOOK_EVENTS_INVALID],
    ['createToken', '{"name": "", "scopes": ["plants:read"]}', errors.TOKEN_NAME_INVALID],
    ['createToken', '{"name": "n", "scopes": []}', errors.TOKEN_SCOPES_INVALID],
    [
      'createToken',
      '{"name": "n", "scopes": ["plants:read"], "expiresIn": "soon"}',
      errors.TOKEN_EXPIRES_IN_INVALID,
    ],
    [
      'createToken',
      '{"name": "n", "scopes": ["plants:read"], "rateLimit": "lots"}',
      errors.TOKEN_RATE_LIMIT_INVALID,
    ],
    ['rollToken', '{"overlap": "forever"}', errors.TOKEN_OVERLAP_INVALID],
  ])('%s refuses %s with its field code', async (operationId, body, entry) => {
    const res = await t.app.inject(request(operationId, bearer(token), body))
    expect([res.statusCode, errorOf(res).error]).toEqual([400, entry.code])
  })

  it('lists no deliveries of a subscription that does not exist', async () => {
    const res = await t.app.inject(request('listWebhookDeliveries', bearer(token)))
    expect([res.statusCode, errorOf(res).error]).toEqual([404, errors.WEBHOOK_NOT_FOUND.code])
  })
})

describe('every operation behind a token, given refused JWTs', () => {
  let t: TestApp
  let jwks: JwksServer
  let key: SigningKey
  beforeAll(async () => {
    key = await signingKey('ES256', 'ec-1')
    jwks = await serveJwks([key])
    t = await makeApp(storeKinds[0] as (typeof storeKinds)[0], {
      ...NO_STREAMS,
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

  it.each(OPERATIONS)(
    '%s answers each JWT problem with its own 401 code and challenge',
    async (operationId) => {
      const now = Math.floor(Date.now() / 1000)
      const stranger = await signingKey('ES256', 'not-published')
      const good = await signJwt(key, { scope: SCOPES.join(' ') })
      const [head, body] = good.split('.')
      const cases: Array<[string, string, typeof errors.TOKEN_MISSING]> = [
        ['not valid yet', await signJwt(key, { nbf: now + 600 }), errors.JWT_NOT_YET_VALID],
        [
          'of another issuer',
          await signJwt(key, { iss: 'https://other.example.test' }),
          errors.JWT_ISSUER_WRONG,
        ],
        ['for another audience', await signJwt(key, { aud: 'someone-else' }), errors.JWT_AUDIENCE_WRONG],
        ['signed by an unknown key', await signJwt(stranger), errors.JWT_KEY_UNKNOWN],
        [
          'with a signature of other parts',
          `${head}.${body}.${'A'.repeat(86)}`,
          errors.JWT_SIGNATURE_INVALID,
        ],
        [
          'unsigned',
          handBuiltJwt({ alg: 'none' }, { iss: ISSUER, aud: AUDIENCE, sub: 'a', exp: now + 60 }),
          errors.JWT_ALGORITHM_REFUSED,
        ],
        ['whose parts are no JSON', 'eyJub3Q.anNvbg.c2ln', errors.JWT_MALFORMED],
        ['without a subject', await signJwt(key, { sub: undefined }), errors.JWT_SUBJECT_MISSING],
        ['without an expiry', await signJwt(key, { exp: undefined }), errors.JWT_EXPIRY_MISSING],
      ]
      for (const [what, jwt, entry] of cases) {
        const res = await t.app.inject(request(operationId, bearer(jwt)))
        expect([what, res.statusCode, errorOf(res).error]).toEqual([what, 401, entry.code])
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="plantstore", error="invalid_token"/)
      }
      // And the good one is let through to the operation (whatever it then answers).
      expect((await t.app.inject(request(operationId, bearer(good)))).statusCode).not.toBe(401)
    },
  )
})

describe('every operation behind a token past the rate limit', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await makeApp(storeKinds[0] as (typeof storeKinds)[0], {
      ...NO_STREAMS,
      rateLimit: { max: 1, windowMs: 60_000 },
    })
  })
  afterAll(() => t.close())

  it.each(OPERATIONS)('%s answers 429 with Retry-After', async (operationId) => {
    const token = await t.token([...SCOPES])
    await t.app.inject(request(operationId, bearer(token)))
    const res = await t.app.inject(request(operationId, bearer(token)))
    expect([res.statusCode, errorOf(res).error]).toEqual([429, errors.RATE_LIMITED.code])
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  })
})

/**
 * Makes every read and write of plants, subscriptions, idempotency keys and tokens fail with `error`
 * (a token verified before still verifies: the revocation epoch is read as before); returns what
 * undoes it. The stubs are own properties over the stores' methods.
 */
function breakStore(t: TestApp, error: Error): () => void {
  const parts = [
    t.store.plants,
    t.store.webhooks,
    t.store.idempotency,
    t.store.events,
    t.store.tokens,
  ] as object[]
  const kept = new Set(['constructor', 'revocationEpoch', 'touchLastUsed'])
  const stubbed: Array<[object, string]> = []
  for (const part of parts) {
    for (let proto = Object.getPrototypeOf(part); proto && proto !== Object.prototype; ) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (kept.has(name) || typeof (part as Record<string, unknown>)[name] !== 'function') continue
        if (Object.hasOwn(part, name)) continue
        Object.defineProperty(part, name, { value: () => Promise.reject(error), configurable: true })
        stubbed.push([part, name])
      }
      proto = Object.getPrototypeOf(proto)
    }
  }
  return () => {
    for (const [part, name] of stubbed) delete (part as Record<string, unknown>)[name]
  }
}
