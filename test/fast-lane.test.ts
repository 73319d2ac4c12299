import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect } from 'node:net'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../src/app.js'
import { errors } from '../src/errors.js'
import { FastLane } from '../src/http/fast-lane.js'
import { StoreUnavailableError } from '../src/store/errors.js'
import type { Store } from '../src/store/types.js'
import { TokenService } from '../src/tokens/service.js'
import { listenLocally } from './helpers/app.js'
import { openFresh, sqliteKind } from './helpers/stores.js'

// POST /plants, GET /plants and GET /plants/{id} are answered by the fast lane (src/http/fast-lane.ts)
// when they come over a real socket with ordinary headers, and by the Fastify routes otherwise
// (app.inject never reaches the lane). These tests send the same requests both ways, each to its own fresh service, and require
// the same status, headers and body bytes, and that the lane really answered the socket's copy.

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

// Set by Node per connection (or per answer, in Date's case), not by the application.
const TRANSPORT = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])

function comparable(status: number, headers: Record<string, unknown>, body: string): Answer {
  const kept: Record<string, string> = {}
  for (const name of Object.keys(headers).sort()) {
    if (!TRANSPORT.has(name)) kept[name] = String(headers[name])
  }
  return { status, headers: kept, body }
}

interface Service {
  app: FastifyInstance
  store: Store
  tokens: TokenService
  port: number
  token: string
  /** Token verifications counted, as the service's metric counts them. */
  verified: { hit: number; miss: number }
}

async function service(
  options: { rateLimit?: { max: number; windowMs: number }; corsOrigins?: string[] } = {},
): Promise<Service> {
  const { store } = await openFresh(sqliteKind)
  const verified = { hit: 0, miss: 0 }
  const tokens = new TokenService(store.tokens, { onVerify: (cache) => verified[cache]++ })
  const app = await buildApp({
    store,
    tokens,
    rateLimit: options.rateLimit ?? null,
    corsOrigins: options.corsOrigins ?? null,
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { token } = await tokens.create('test', ['plants:read', 'plants:write'])
  return { app, store, tokens, port: (app.server.address() as AddressInfo).port, token, verified }
}

async function stop(s: Service): Promise<void> {
  await s.app.close()
  await s.store.close()
}

function overSocket(
  port: number,
  headers: Record<string, string>,
  body: string | Buffer,
  method = 'POST',
  path = '/plants',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve(comparable(res.statusCode ?? 0, res.headers, Buffer.concat(chunks).toString('utf8'))),
      )
    })
    req.on('error', reject)
    req.end(body)
  })
}

async function injected(
  app: FastifyInstance,
  headers: Record<string, string>,
  body: string | Buffer,
  method: 'POST' | 'GET' | 'HEAD' = 'POST',
  url = '/plants',
) {
  const res = await app.inject({ method, url, headers, ...(method === 'POST' ? { payload: body } : {}) })
  return comparable(res.statusCode, res.headers, res.body)
}

function headersFor(
  s: Service,
  extra: Record<string, string> = {},
  body: string | Buffer = '',
): Record<string, string> {
  return {
    authorization: `Bearer ${s.token}`,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': 'fast-lane-test',
    ...extra,
  }
}

describe('the create fast lane answers exactly as the Fastify route', () => {
  let viaSocket: Service
  let viaInject: Service
  const take = vi.spyOn(FastLane.prototype, 'take')

  beforeAll(async () => {
    viaSocket = await service()
    viaInject = await service()
    // The first request of a token is verified by the framework's path; from then on it is cached.
    await overSocket(viaSocket.port, headersFor(viaSocket, {}, '{}'), '{}')
    await injected(viaInject.app, headersFor(viaInject, {}, '{}'), '{}')
  })
  afterAll(async () => {
    await stop(viaSocket)
    await stop(viaInject)
  })
  afterEach(() => take.mockClear())

  /** Sends the body both ways; returns whether the lane took the socket's copy. */
  async function both(body: string | Buffer, extra: Record<string, string> = {}): Promise<boolean> {
    return (await bothAnswered(body, extra)).taken
  }

  /** The same, with the answer both gave. */
  async function bothAnswered(body: string | Buffer, extra: Record<string, string> = {}) {
    take.mockClear()
    const fast = await overSocket(viaSocket.port, headersFor(viaSocket, extra, body), body)
    const taken = take.mock.results.some((r) => r.value === true)
    const framework = await injected(viaInject.app, headersFor(viaInject, extra, body), body)
    expect(fast).toEqual(framework)
    return { taken, answer: fast }
  }

  it.each([
    ['a plant with a tag', '{"id": 1, "name": "Monstera", "tag": "aroid"}'],
    ['a plant without a tag', '{"id": 2, "name": "Fern"}'],
    ['the largest id', '{"id": 9223372036854775807, "name": "max"}'],
    ['the smallest id', '{"id": -9223372036854775808, "name": "min"}'],
    ['2^53 + 1', '{"id": 9007199254740993, "name": "exact"}'],
    ['unknown fields, dropped', '{"id": 3, "name": "x", "colour": "green", "nested": {"a": [1, 2]}}'],
    ['escapes and astral characters', '{"id": 4, "name": "\\"q\\" \\\\ \\u2028 🌵", "tag": "é\\t"}'],
    ['white space around everything', ' \n { "id" : 5 , "name" : "spaced" } \n '],
    ['an existing id (409)', '{"id": 1, "name": "again"}'],
    ['malformed JSON', '{"id": 6, "name": '],
    ['a body that is not an object', '[1, 2]'],
    ['a JSON null body', 'null'],
    ['a blank body', '   '],
    ['a body of a no-break space', '\u00a0'],
    ['a missing id', '{"name": "no id"}'],
    ['an id in exponent form', '{"id": 1e3, "name": "x"}'],
    ['an id as a string', '{"id": "7", "name": "x"}'],
    ['an id past int64', '{"id": 9223372036854775808, "name": "x"}'],
    ['-0', '{"id": -0, "name": "x"}'],
    ['a name that is a number', '{"id": 8, "name": 8}'],
    ['an empty name', '{"id": 9, "name": ""}'],
    ['a name of 201 characters', `{"id": 10, "name": "${'n'.repeat(201)}"}`],
    ['a control character', '{"id": 11, "name": "a\\u0001b"}'],
    ['a lone surrogate', '{"id": 12, "name": "\\ud800"}'],
    ['a null tag', '{"id": 13, "name": "x", "tag": null}'],
    ['a repeated key', '{"id": 14, "id": 15, "name": "x"}'],
    ['a key repeated with the same value', '{"id": 20, "name": "x", "name": "x"}'],
    [
      'an ignored field nested too deep',
      `{"id": 21, "name": "x", "x": ${'['.repeat(6000)}${']'.repeat(6000)}}`,
    ],
    ['__proto__', '{"id": 16, "name": "x", "__proto__": {"polluted": true}}'],
  ])('%s', async (_case, body) => {
    expect(await both(body)).toBe(true)
  })

  it.each([
    ['bytes that are not UTF-8', [0xff, 0xfe]],
    ['a surrogate encoded in UTF-8 bytes', [0xed, 0xa0, 0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['a sequence cut short', [0xe2, 0x82]],
  ])('%s: 400, never a replacement character stored', async (_case, bytes) => {
    const body = Buffer.concat([Buffer.from('{"id": 17, "name": "a'), Buffer.from(bytes), Buffer.from('b"}')])
    const { taken, answer } = await bothAnswered(body)
    expect(taken).toBe(true)
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.body)).toEqual({
      error: errors.BODY_MALFORMED.code,
      message: 'The request body is not valid UTF-8.',
    })
  })

  it('malformed JSON after characters of several bytes: the same byte offset both ways', async () => {
    const body = '{"id": 18, "name": "🌿 Farn", "tag": "Grün",}'
    const { taken, answer } = await bothAnswered(body)
    expect(taken).toBe(true)
    // 44 UTF-16 units precede the brace, 47 bytes.
    expect(JSON.parse(answer.body)).toEqual({
      error: errors.BODY_MALFORMED.code,
      message: "The request body is not valid JSON: Quoted object key expected but got '}' at position 47",
    })
    expect(Buffer.from(body).subarray(47).toString()).toBe('}')
  })

  it.each([
    ['malformed JSON', '{"id": 60, "name": ', 'close'],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'close'],
    ['a plant without an id', '{"name": "no id"}', 'keep-alive'],
    ['a blank body', '  ', 'keep-alive'],
  ])(
    '%s: the connection is closed after the answer only as the framework closes it',
    async (_case, body, connection) => {
      const framework = await viaInject.app.inject({
        method: 'POST',
        url: '/plants',
        headers: headersFor(viaInject, {}, body),
        payload: body,
      })
      expect(framework.headers.connection).toBe(connection)
      take.mockClear()
      const fast = await new Promise<string | undefined>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: viaSocket.port,
            method: 'POST',
            path: '/plants',
            headers: headersFor(viaSocket, {}, body),
          },
          (res) => {
            res.resume()
            res.on('end', () => resolve(res.headers.connection))
          },
        )
        req.on('error', reject)
        req.end(body)
      })
      expect(take.mock.results.some((r) => r.value === true)).toBe(true)
      expect(fast).toBe(connection)
    },
  )

  it.each([
    ['with an Idempotency-Key', { 'idempotency-key': 'k-1' }, '{"id": 30, "name": "keyed"}'],
    ['from a browser origin', { origin: 'https://example.test' }, '{"id": 31, "name": "cors"}'],
    ['as a merge patch', { 'content-type': 'application/merge-patch+json' }, '{"id": 32, "name": "x"}'],
    ['as text', { 'content-type': 'text/plain' }, '{"id": 33, "name": "x"}'],
    [
      'in another charset',
      { 'content-type': 'application/json; charset=iso-8859-1' },
      '{"id": 36, "name": "x"}',
    ],
    ['with a content coding', { 'content-encoding': 'gzip' }, '{"id": 37, "name": "x"}'],
    [
      'with a token never seen',
      { authorization: 'Bearer pst_0000000000000000_nope' },
      '{"id": 34, "name": "x"}',
    ],
    ['without a token', { authorization: '' }, '{"id": 35, "name": "x"}'],
  ])('leaves a request %s to the framework', async (_case, extra, body) => {
    expect(await both(body, extra)).toBe(false)
  })

  it.each([
    ['application/json; charset=utf-8', 40],
    ['Application/JSON', 41],
    ['application/json; charset=UTF-8', 42],
  ])('takes the media type written as %s', async (type, id) => {
    expect(await both(`{"id": ${id}, "name": "typed"}`, { 'content-type': type })).toBe(true)
  })

  it('any name and tag (generated)', async () => {
    let id = 1000
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', maxLength: 210 }),
        fc.option(fc.string({ maxLength: 110 })),
        async (name, tag) => {
          id++
          const body = JSON.stringify(tag === null ? { id, name } : { id, name, tag })
          expect(await both(body)).toBe(true)
        },
      ),
      { numRuns: 150 },
    )
  })

  it('a store that is unreachable: 503 with Retry-After', async () => {
    const down = () => Promise.reject(new StoreUnavailableError('test outage'))
    const a = vi.spyOn(viaSocket.store.plants, 'create').mockImplementation(down)
    const b = vi.spyOn(viaInject.store.plants, 'create').mockImplementation(down)
    try {
      expect(await both('{"id": 50, "name": "lost"}')).toBe(true)
    } finally {
      a.mockRestore()
      b.mockRestore()
    }
  })
})

describe('the create fast lane under a rate limit', () => {
  it('counts against the token and refuses past the limit with the same answers', async () => {
    const limit = { max: 3, windowMs: 60_000 }
    const a = await service({ rateLimit: limit })
    const b = await service({ rateLimit: limit })
    try {
      // Rate-limit headers count down a window of seconds: the reset may differ by one between the two.
      const strip = (answer: Answer) => {
        const { 'ratelimit-reset': _reset, 'retry-after': _retry, ...rest } = answer.headers
        return { ...answer, headers: rest }
      }
      const statuses: number[] = []
      for (let i = 0; i < 5; i++) {
        const body = `{"id": ${i}, "name": "limited"}`
        const fast = await overSocket(a.port, headersFor(a, {}, body), body)
        const framework = await injected(b.app, headersFor(b, {}, body), body)
        expect(strip(fast)).toEqual(strip(framework))
        statuses.push(fast.status)
      }
      // The first request of the token goes through the framework (it is not cached yet) and counts too.
      expect(statuses).toEqual([200, 200, 200, 429, 429])
    } finally {
      await stop(a)
      await stop(b)
    }
  })
})

describe('token verifications counted', () => {
  const take = vi.spyOn(FastLane.prototype, 'take')

  /** Sends GET /plants with `token` to each service, the socket's copy twice; the counts of both. */
  async function counted(a: Service, b: Service, tokenOf: (s: Service) => string, status: number) {
    for (let i = 0; i < 2; i++) {
      take.mockClear()
      const fast = await overSocket(a.port, { authorization: `Bearer ${tokenOf(a)}` }, '', 'GET', '/plants')
      expect(take.mock.results.some((r) => r.value === true)).toBe(false)
      const framework = await injected(b.app, { authorization: `Bearer ${tokenOf(b)}` }, '', 'GET', '/plants')
      expect([fast.status, framework.status]).toEqual([status, status])
    }
    expect(a.verified).toEqual(b.verified)
  }

  it('are the same when the lane leaves a token to the framework', async () => {
    const a = await service()
    const b = await service()
    try {
      const writers = new Map<Service, string>()
      for (const s of [a, b]) writers.set(s, (await s.tokens.create('w', ['plants:write'])).token)
      // A token without the read scope: refused each time by the framework, counted once per request.
      await counted(a, b, (s) => writers.get(s) as string, 403)
      // A token revoked since it was cached.
      for (const s of [a, b]) {
        await s.tokens.verify(s.token)
        const [id] = s.token.split('_').slice(1, 2)
        expect(await s.tokens.revoke(id as string)).toBe('revoked')
      }
      await counted(a, b, (s) => s.token, 401)
    } finally {
      await stop(a)
      await stop(b)
    }
  })
})

describe('a token the fast lane has seen', () => {
  it('is refused as expired once its expiry passes, not served from the cache', async () => {
    const { store } = await openFresh(sqliteKind)
    let clock = Date.now()
    const tokens = new TokenService(store.tokens, { now: () => clock })
    const app = await buildApp({ store, tokens, rateLimit: null, corsOrigins: null })
    try {
      const port = await listenLocally(app)
      const { token } = await tokens.create('short', ['plants:read'], 60_000)
      const read = () => overSocket(port, { authorization: `Bearer ${token}` }, '', 'GET', '/plants')
      // The second read is one the lane answers from its cache.
      expect((await read()).status).toBe(200)
      expect((await read()).status).toBe(200)
      clock += 61_000
      const expired = await read()
      expect(expired.status).toBe(401)
      expect(JSON.parse(expired.body).error).toBe(errors.TOKEN_EXPIRED.code)
    } finally {
      await app.close()
      await store.close()
    }
  })
})

describe('the fast lane with CORS on', () => {
  it('sends the CORS headers the framework sends to a request without Origin', async () => {
    const a = await service({ corsOrigins: ['https://app.example.test'] })
    const b = await service({ corsOrigins: ['https://app.example.test'] })
    const take = vi.spyOn(FastLane.prototype, 'take')
    try {
      const requests: [string, string, string][] = [
        ['POST', '/plants', '{"id": 1, "name": "first"}'],
        ['POST', '/plants', '{"id": 2, "name": "second"}'],
        ['POST', '/plants', '{"id": 1, "name": "again"}'],
        ['GET', '/plants/1', ''],
        ['GET', '/plants/3', ''],
        ['GET', '/plants?limit=1', ''],
      ]
      for (const [i, [method, path, body]] of requests.entries()) {
        take.mockClear()
        const headers = (s: Service) =>
          body === '' ? { authorization: `Bearer ${s.token}` } : headersFor(s, {}, body)
        const fast = await overSocket(a.port, headers(a), body, method, path)
        // The first request verifies the token through the framework; the lane answers the rest.
        expect(take.mock.results.some((r) => r.value === true)).toBe(i > 0)
        const framework = await injected(b.app, headers(b), body, method as 'GET' | 'POST', path)
        const { 'x-request-id': _a, ...fastHeaders } = fast.headers
        const { 'x-request-id': _b, ...frameworkHeaders } = framework.headers
        expect({ ...fast, headers: fastHeaders }).toEqual({ ...framework, headers: frameworkHeaders })
        // A page is compressed when the client asks: it varies by Accept-Encoding too.
        expect(fast.headers.vary).toBe(path.startsWith('/plants?') ? 'Origin, accept-encoding' : 'Origin')
      }
    } finally {
      await stop(a)
      await stop(b)
    }
  })
})

describe('the fast lane answers reads exactly as the Fastify routes', () => {
  let viaSocket: Service
  let viaInject: Service
  const take = vi.spyOn(FastLane.prototype, 'take')
  const PLANTS = [
    '{"id": -9223372036854775808, "name": "min"}',
    '{"id": -5, "name": "negative", "tag": "aroid"}',
    '{"id": 7, "name": "seven", "tag": "fern"}',
    '{"id": 9007199254740993, "name": "\\"q\\" \\u2028 🌵", "tag": "aroid"}',
    '{"id": 9223372036854775807, "name": "max", "tag": "fern"}',
  ]

  beforeAll(async () => {
    viaSocket = await service()
    viaInject = await service()
    for (const body of PLANTS) {
      await overSocket(viaSocket.port, headersFor(viaSocket, {}, body), body)
      await injected(viaInject.app, headersFor(viaInject, {}, body), body)
    }
  })
  afterAll(async () => {
    await stop(viaSocket)
    await stop(viaInject)
  })
  afterEach(() => take.mockClear())

  function readHeaders(s: Service, extra: Record<string, string>): Record<string, string> {
    return { authorization: `Bearer ${s.token}`, 'x-request-id': 'fast-lane-test', ...extra }
  }

  /** Sends the read both ways; returns whether the lane took the socket's copy. */
  async function both(path: string, extra: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
    take.mockClear()
    const fast = await overSocket(viaSocket.port, readHeaders(viaSocket, extra), '', method, path)
    const taken = take.mock.results.some((r) => r.value === true)
    const framework = await injected(viaInject.app, readHeaders(viaInject, extra), '', method, path)
    expect(fast).toEqual(framework)
    return { taken, answer: fast }
  }

  it.each([
    ['a plant with a tag', '/plants/7', 200],
    ['the smallest id', '/plants/-9223372036854775808', 200],
    ['the largest id', '/plants/9223372036854775807', 200],
    ['2^53 + 1, with escapes in its name', '/plants/9007199254740993', 200],
    ['an id that is not stored (404)', '/plants/8', 404],
    ['the first page', '/plants', 200],
    ['a page that has a next one', '/plants?limit=2', 200],
    ['a page after a cursor', '/plants?limit=2&after=-5', 200],
    ['the page after the largest id', '/plants?after=9223372036854775807', 200],
    ['a page of one tag', '/plants?tag=aroid&limit=1', 200],
    ['an empty query', '/plants?', 200],
  ])('%s', async (_case, path, status) => {
    const { taken, answer } = await both(path)
    expect(answer.status).toBe(status)
    expect(taken).toBe(true)
  })

  it.each(['gzip', 'x-unknown', 'IDENTITY'])(
    'a read with a Content-Encoding: %s header and no body',
    async (coding) => {
      for (const path of ['/plants/7', '/plants']) {
        const { taken, answer } = await both(path, { 'content-encoding': coding })
        expect(answer.status).toBe(200)
        expect(taken).toBe(true)
      }
    },
  )

  it('sends every id exactly and pages through the whole listing', async () => {
    const ids: string[] = []
    let path: string | undefined = '/plants?limit=2'
    while (path !== undefined) {
      const { taken, answer } = await both(path)
      expect(taken).toBe(true)
      ids.push(...[...answer.body.matchAll(/"id":(-?\d+)/g)].map((m) => m[1] as string))
      path = /^<([^>]+)>; rel="next"$/.exec(answer.headers.link ?? '')?.[1]
    }
    expect(ids).toEqual(['-9223372036854775808', '-5', '7', '9007199254740993', '9223372036854775807'])
  })

  it.each([
    ['an id past int64', '/plants/9223372036854775808', {}],
    ['an id with leading zeros (400)', '/plants/007', {}],
    ['an id that is not a number', '/plants/seven', {}],
    ['a read with a query', '/plants/7?x=1', {}],
    ['a conditional read', '/plants/7', { 'if-none-match': '"anything"' }],
    ['a read on a condition it no longer meets (412)', '/plants/7', { 'if-match': '"anything"' }],
    ['a limit out of range', '/plants?limit=0', {}],
    ['a repeated limit', '/plants?limit=1&limit=2', {}],
    ['an unknown parameter', '/plants?colour=green', {}],
    ['an encoded tag', '/plants?tag=a%20b', {}],
    ['a compressed page', '/plants', { 'accept-encoding': 'gzip' }],
    ['a browser origin', '/plants/7', { origin: 'https://example.test' }],
    ['a token never seen', '/plants/7', { authorization: 'Bearer pst_0000000000000000_nope' }],
  ])('leaves %s to the framework', async (_case, path, extra) => {
    expect((await both(path, extra)).taken).toBe(false)
  })

  it('any stored name and tag reads back the same both ways (generated)', async () => {
    let id = 5000
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 200 }),
        fc.option(fc.string({ minLength: 1, maxLength: 100 })),
        async (name, tag) => {
          id++
          const body = JSON.stringify(tag === null ? { id, name } : { id, name, tag })
          const created = await overSocket(viaSocket.port, headersFor(viaSocket, {}, body), body)
          await injected(viaInject.app, headersFor(viaInject, {}, body), body)
          const { taken, answer } = await both(`/plants/${id}`)
          expect(answer.status).toBe(created.status === 200 ? 200 : 404)
          expect(taken).toBe(true)
        },
      ),
      { numRuns: 100 },
    )
  })

  it('counts its answers in the metric series of their routes', async () => {
    const { token } = await new TokenService(viaSocket.store.tokens).create('m', ['metrics:read'])
    const count = async (route: string) => {
      const res = await viaSocket.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${token}` },
      })
      const line = res.body
        .split('\n')
        .find(
          (l) =>
            l.startsWith('plantstore_http_requests_total{') &&
            l.includes('method="GET"') &&
            l.includes(`route="${route}"`) &&
            l.includes('status="200"'),
        )
      return line === undefined ? 0 : Number(line.split(' ').pop())
    }
    const one = await count('/plants/:id')
    const pages = await count('/plants')
    expect((await both('/plants/7')).taken).toBe(true)
    expect((await both('/plants?limit=1')).taken).toBe(true)
    expect((await both('/plants?limit=1')).taken).toBe(true)
    expect([await count('/plants/:id'), await count('/plants')]).toEqual([one + 1, pages + 2])
  })

  it('leaves HEAD to the framework', async () => {
    expect((await both('/plants/7', {}, 'HEAD')).taken).toBe(false)
  })

  it('leaves a token without plants:read to the framework, which answers 403', async () => {
    const writeOnly = async (s: Service) =>
      (await new TokenService(s.store.tokens).create('w', ['plants:write'])).token
    const readers = [viaSocket.token, viaInject.token] as const
    viaSocket.token = await writeOnly(viaSocket)
    viaInject.token = await writeOnly(viaInject)
    try {
      // Its first use is the framework's anyway; the second would be the lane's if it had the scope.
      for (let i = 0; i < 2; i++) {
        const { taken, answer } = await both('/plants')
        expect(taken).toBe(false)
        expect(answer.status).toBe(403)
      }
    } finally {
      ;[viaSocket.token, viaInject.token] = readers
    }
  })

  it('revocations that cannot be read: the framework answers 503, and the process goes on', async () => {
    const failing = [viaSocket, viaInject].map((s) =>
      vi.spyOn(s.store.tokens, 'revocationEpoch').mockImplementation(() => {
        throw new StoreUnavailableError('test outage')
      }),
    )
    try {
      // A new turn of the event loop reads the revocations again, for the lane's look and then the
      // framework's.
      await new Promise((resolve) => setImmediate(resolve))
      const { taken, answer } = await both('/plants/7')
      expect(taken).toBe(false)
      expect(answer.status).toBe(503)
    } finally {
      for (const spy of failing) spy.mockRestore()
    }
    expect((await both('/plants/7')).answer.status).toBe(200)
  })

  it('a store that is unreachable: 503 with Retry-After, for a plant and for a page', async () => {
    const down = () => Promise.reject(new StoreUnavailableError('test outage'))
    const spies = [
      vi.spyOn(viaSocket.store.plants, 'read').mockImplementation(down),
      vi.spyOn(viaInject.store.plants, 'read').mockImplementation(down),
      vi.spyOn(viaSocket.store.plants, 'listJson').mockImplementation(down),
      vi.spyOn(viaInject.store.plants, 'listJson').mockImplementation(down),
    ]
    try {
      for (const path of ['/plants/7', '/plants?limit=2']) {
        const { taken, answer } = await both(path)
        expect(taken).toBe(true)
        expect(answer.status).toBe(503)
      }
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
  })
})

describe('the fast lane behind an answer that closes the connection', () => {
  it('does not count a pipelined read whose answer never goes out', async () => {
    const s = await service()
    const take = vi.spyOn(FastLane.prototype, 'take')
    try {
      await s.tokens.verify(s.token)
      const { token } = await s.tokens.create('m', ['metrics:read'])
      const reads = async () => {
        const res = await s.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${token}` } })
        const line = res.body
          .split('\n')
          .find((l) => l.startsWith('plantstore_http_requests_total{method="GET",route="/plants/:id"'))
        return line === undefined ? 0 : Number(line.split(' ').pop())
      }
      // A body past --body-limit on a read is answered with the connection closed; the read pipelined
      // behind it runs at once (both are reads), and its answer is never sent.
      const big = 'x'.repeat(70 * 1024)
      const bytes =
        `GET /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nContent-Length: ${big.length}\r\n\r\n${big}` +
        `GET /plants/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\n\r\n`
      const received = await new Promise<string>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: s.port })
        let data = ''
        socket.on('data', (chunk) => {
          data += chunk
        })
        socket.on('close', () => resolve(data))
        socket.on('error', () => {})
        socket.write(bytes)
      })
      expect(received.match(/^HTTP\/1\.1 /gm)).toEqual(['HTTP/1.1 '])
      // The read behind is either never carried out (parsed once the closing answer had ended the
      // connection's writing) or taken by the lane with its answer dropped: counted neither way.
      expect(take.mock.results[0]?.value).toBe(true)
      expect(take.mock.results.every((r) => r.value === true)).toBe(true)
      expect(await reads()).toBe(1)
    } finally {
      take.mockRestore()
      await stop(s)
    }
  })
})
