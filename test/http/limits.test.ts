import { afterEach, describe, expect, it, vi } from 'vitest'
import { type AppOptions, buildApp } from '../../src/app.js'
import { resolveServeConfig } from '../../src/config.js'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { TokenService } from '../../src/tokens/service.js'
import { errorOf, listenLocally } from '../helpers/app.js'
import { watchContract } from '../helpers/contract.js'
import { captureLines } from '../helpers/log.js'
import { openSocket, rawRequest, readUntilClose } from '../helpers/raw-http.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

const kind = storeKinds[0] as (typeof storeKinds)[0]

describe('abuse limits and response headers', () => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => {
    await close?.()
    close = undefined
  })

  async function app(options: Partial<AppOptions> = {}) {
    const { store } = await openFresh(kind)
    const tokens = new TokenService(store.tokens)
    const built = await buildApp({ store, tokens, ...options })
    await built.ready()
    const contract = watchContract(built)
    close = async () => {
      contract.done()
      await built.close()
      await store.close()
    }
    const token = async () => (await tokens.create('t', ['plants:read', 'plants:write'])).token
    return { app: built, token }
  }

  it('limits each token to COUNT per WINDOW with 429, the Error shape, Retry-After and RateLimit-*', async () => {
    const { app: a, token } = await app({ rateLimit: { max: 3, windowMs: 60_000 } })
    const first = await token()
    const second = await token()
    const get = (t: string) => a.inject({ url: '/plants/1', headers: { authorization: `Bearer ${t}` } })
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await get(first)).statusCode)
    expect(statuses).toEqual([404, 404, 404])
    const limited = await get(first)
    expect(limited.statusCode).toBe(429)
    expect(errorOf(limited).error).toBe(errors.RATE_LIMITED.code)
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['ratelimit-limit']).toBe('3')
    expect(limited.headers['ratelimit-remaining']).toBe('0')
    expect(Number(limited.headers['ratelimit-reset'])).toBeGreaterThan(0)
    // Another token has its own allowance.
    expect((await get(second)).statusCode).toBe(404)
  })

  it('by default lets a token send as fast as it likes, and slows down clients without a valid token', async () => {
    const defaults = resolveServeConfig({}, {})
    const { app: a, token } = await app({
      rateLimit: defaults.rateLimit,
      unauthenticatedRateLimit: defaults.unauthenticatedRateLimit,
    })
    const held = await token()
    const statuses = new Set<number>()
    for (let i = 0; i < 300; i++) {
      const res = await a.inject({ url: '/plants?limit=1', headers: { authorization: `Bearer ${held}` } })
      statuses.add(res.statusCode)
      expect(res.headers['ratelimit-limit']).toBeUndefined()
    }
    expect([...statuses]).toEqual([200])
    const bogus = { authorization: `Bearer pst_${'0'.repeat(16)}_${'A'.repeat(43)}` }
    const refused: number[] = []
    for (let i = 0; i < 101; i++)
      refused.push((await a.inject({ url: '/plants/1', headers: bogus })).statusCode)
    expect(refused.slice(0, 100).every((status) => status === 401)).toBe(true)
    const limited = await a.inject({ url: '/plants/1', headers: bogus })
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['ratelimit-limit']).toBe('100')
    // The address is slowed down, the token still is not.
    expect(
      (await a.inject({ url: '/plants/1', headers: { authorization: `Bearer ${held}` } })).statusCode,
    ).toBe(404)
  })

  it('starts a new window after the wall clock steps back, with a Retry-After of at most the window', async () => {
    const { app: a, token } = await app({ rateLimit: { max: 1, windowMs: 1000 } })
    const held = await token()
    const get = () => a.inject({ url: '/plants/1', headers: { authorization: `Bearer ${held}` } })
    const start = Date.now()
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    try {
      expect((await get()).statusCode).toBe(404)
      // An NTP step or a resumed VM: the clock goes back an hour.
      vi.setSystemTime(start - 3_600_000)
      const limited = await get()
      expect(limited.statusCode).toBe(429)
      expect(Number(limited.headers['retry-after'])).toBe(1)
      await new Promise((resolve) => setTimeout(resolve, 1100))
      expect((await get()).statusCode).toBe(404)
    } finally {
      vi.useRealTimers()
    }
  })

  it('counts requests without a valid token against the client address', async () => {
    const { app: a, token } = await app({ unauthenticatedRateLimit: { max: 2, windowMs: 60_000 } })
    const bogus = (n: number) =>
      a.inject({ url: '/plants/1', headers: { authorization: `Bearer pst_${'0'.repeat(15)}${n}_x` } })
    expect((await a.inject({ url: '/plants/1' })).statusCode).toBe(401)
    expect((await bogus(1)).statusCode).toBe(401)
    // Inventing yet another token does not escape the address's allowance.
    const limited = await bogus(2)
    expect(limited.statusCode).toBe(429)
    errorOf(limited)
    // A valid token is counted on its own.
    const valid = await token()
    expect(
      (await a.inject({ url: '/plants/1', headers: { authorization: `Bearer ${valid}` } })).statusCode,
    ).toBe(404)
  })

  it('counts a request without a valid token against its address when its client is gone by then', async () => {
    const { store } = await openFresh(kind)
    // The store takes a while to say a token is unknown, as a database across a network does.
    const find = store.tokens.find.bind(store.tokens)
    let lookedUp: Promise<unknown> | undefined
    store.tokens.find = (id) => {
      lookedUp = new Promise((resolve) => setTimeout(resolve, 200)).then(() => find(id))
      return lookedUp as ReturnType<typeof find>
    }
    const built = await buildApp({
      store,
      tokens: new TokenService(store.tokens),
      unauthenticatedRateLimit: { max: 5, windowMs: 60_000 },
    })
    close = async () => {
      await built.close()
      await store.close()
    }
    const port = await listenLocally(built)
    const invented = `Bearer pst_${'0'.repeat(16)}_${'A'.repeat(43)}`
    const socket = await openSocket(port)
    socket.write(`GET /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${invented}\r\n\r\n`)
    await vi.waitFor(() => expect(lookedUp).toBeDefined())
    // Gone while its token is still being looked up; the refusal is counted once the lookup ends.
    socket.resetAndDestroy()
    await lookedUp
    await new Promise((resolve) => setImmediate(resolve))
    const next = await fetch(`http://127.0.0.1:${port}/plants/1`, { headers: { authorization: invented } })
    expect(next.status).toBe(401)
    // Both were counted against the one address.
    expect(next.headers.get('ratelimit-remaining')).toBe('3')
  })

  it('does not limit when the limit is off, nor what needs no token', async () => {
    const { app: a } = await app({ unauthenticatedRateLimit: { max: 1, windowMs: 60_000 } })
    for (const [url, status] of [
      ['/healthz', 200],
      ['/readyz', 200],
      ['/openapi.json', 200],
      ['/docs', 200],
      ['/nowhere', 404],
    ] as const) {
      for (let i = 0; i < 5; i++) {
        const res = await a.inject({ url })
        expect(res.statusCode).toBe(status)
        expect(res.headers['ratelimit-limit']).toBeUndefined()
      }
    }
    // The address's allowance is still whole: what went before was not counted against it.
    const first = await a.inject({ url: '/plants/1' })
    expect([first.statusCode, first.headers['ratelimit-remaining']]).toEqual([401, '0'])
    expect((await a.inject({ url: '/plants/1' })).statusCode).toBe(429)
    const { app: b } = await app({ unauthenticatedRateLimit: null })
    for (let i = 0; i < 5; i++) expect((await b.inject({ url: '/plants/1' })).statusCode).toBe(401)
  })

  it('keys addresses by X-Forwarded-For only behind a trusted proxy', async () => {
    const limits = { unauthenticatedRateLimit: { max: 1, windowMs: 60_000 } }
    const from = (a: Awaited<ReturnType<typeof app>>['app'], client: string) =>
      a.inject({ url: '/plants/1', headers: { 'x-forwarded-for': client } })
    const { app: trusting } = await app({ ...limits, trustProxy: ['127.0.0.1'] })
    expect((await from(trusting, '203.0.113.1')).statusCode).toBe(401)
    expect((await from(trusting, '203.0.113.2')).statusCode).toBe(401)
    expect((await from(trusting, '203.0.113.1')).statusCode).toBe(429)
    await close?.()
    const { app: direct } = await app(limits)
    expect((await from(direct, '203.0.113.1')).statusCode).toBe(401)
    expect((await from(direct, '203.0.113.2')).statusCode).toBe(429)
  })

  it('counts an IPv6 client by its /64, and an address alike however a proxy writes it', async () => {
    const { app: a } = await app({
      unauthenticatedRateLimit: { max: 2, windowMs: 60_000 },
      trustProxy: ['127.0.0.1'],
    })
    const from = (client: string) => a.inject({ url: '/plants/1', headers: { 'x-forwarded-for': client } })
    // One host picks any address of the /64 it was handed: inventing addresses does not escape the limit.
    expect((await from('2001:db8:1:2::1')).statusCode).toBe(401)
    expect((await from('2001:db8:1:2:ffff:ffff:ffff:ffff')).statusCode).toBe(401)
    expect((await from('[2001:db8:1:2::3]:443')).statusCode).toBe(429)
    expect((await from('2001:db8:1:3::1')).statusCode).toBe(401)
    // A proxy that writes the client's port, or the IPv4 address mapped into IPv6, names the same client.
    expect((await from('203.0.113.9')).statusCode).toBe(401)
    expect((await from('203.0.113.9:50123')).statusCode).toBe(401)
    expect((await from('::ffff:203.0.113.9')).statusCode).toBe(429)
  })

  it("keeps a token's count while thousands of other clients are counted in the same window", async () => {
    const { app: a, token } = await app({
      rateLimit: { max: 1, windowMs: 60_000 },
      unauthenticatedRateLimit: { max: 1, windowMs: 60_000 },
      trustProxy: ['127.0.0.1'],
    })
    const held = await token()
    const get = () => a.inject({ url: '/plants/1', headers: { authorization: `Bearer ${held}` } })
    expect((await get()).statusCode).toBe(404)
    // Each a client of its own, counted by address: more than the limiter's default of 5,000 keys.
    for (let i = 0; i < 8_000; i++) {
      const client = `198.51.${i >> 8}.${i & 0xff}`
      const res = await a.inject({ url: '/plants/1', headers: { 'x-forwarded-for': client } })
      expect(res.statusCode).toBe(401)
    }
    // Forgotten, the token's count would start again and this request would pass.
    expect((await get()).statusCode).toBe(429)
  }, 60_000)

  it('logs the forwarded client address and the request id behind a trusted proxy', async () => {
    const { lines, stream: sink } = captureLines()
    const { app: a } = await app({ trustProxy: ['127.0.0.1'], logger: createLogger('debug', sink) })
    await a.inject({
      url: '/healthz',
      headers: { 'x-forwarded-for': '198.51.100.7', 'x-request-id': 'req-42' },
    })
    const completed = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request completed')
    expect(completed).toMatchObject({ reqId: 'req-42', ip: '198.51.100.7', status: 200 })
  })

  it('logs a request whose URL the router cannot decode at debug, as every other request', async () => {
    const { lines, stream: sink } = captureLines()
    const { app: a } = await app({ logger: createLogger('debug', sink) })
    const res = await a.inject({ url: '/plants/%ZZ', headers: { 'x-request-id': 'req-bad-url' } })
    expect(res.statusCode).toBe(400)
    const completed = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request completed')
    expect(completed).toMatchObject({ reqId: 'req-bad-url', url: '/plants/%ZZ', status: 400 })
    // Timed as every other request is: Fastify's own clock for a reply starts only past routing.
    expect(completed.ms).toBeGreaterThan(0)
  })

  it('sheds load with 503, the Error shape and Retry-After while the event loop lags, logging no error', async () => {
    const { lines, stream: sink } = captureLines()
    const { app: a } = await app({ maxEventLoopDelayMs: 20, logger: createLogger('info', sink) })
    await a.ready()
    const until = Date.now() + 500
    while (Date.now() < until) {
      // Hold the event loop, as a saturated process would.
    }
    // The lag counts once a sample window that holds it has ended; which of the monitor's two timers
    // (its histogram's and its sample's) runs first after the hold is up to the loop, so the window
    // that shows it is this one or the next. Ask until then, a few windows at most.
    const deadline = performance.now() + 1000
    let res = await a.inject({ url: '/plants/1' })
    while (res.statusCode !== 503 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      res = await a.inject({ url: '/plants/1' })
    }
    expect(res.statusCode).toBe(503)
    expect(errorOf(res).error).toBe(errors.UNAVAILABLE.code)
    expect(res.headers['retry-after']).toBe('1')
    expect((await a.inject({ url: '/healthz' })).statusCode).toBe(200)
    expect(lines.map((l) => JSON.parse(l).level).filter((level) => level >= 50)).toEqual([])
  })

  it('does not shed the first requests for the lag of its own start', async () => {
    const { store } = await openFresh(kind)
    const built = await buildApp({ store, tokens: new TokenService(store.tokens), maxEventLoopDelayMs: 20 })
    close = async () => {
      await built.close()
      await store.close()
    }
    const until = Date.now() + 300
    while (Date.now() < until) {
      // Hold the event loop after the app is built and before it is ready, as a slow start would.
    }
    await built.ready()
    // The monitor's sample timer, overdue since the loop was held, runs before this one.
    await new Promise((resolve) => setTimeout(resolve, 1))
    expect((await built.inject({ url: '/plants/1' })).statusCode).toBe(401)
  })

  it('sends security headers fit for an API, with a CSP that allows a same-origin docs page', async () => {
    const { app: a } = await app()
    const res = await a.inject({ url: '/healthz' })
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['x-frame-options']).toBe('DENY')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=[1-9]/)
    expect(res.headers['cross-origin-resource-policy']).toBe('same-site')
    const csp = String(res.headers['content-security-policy'])
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toMatch(/script-src[^;]*(unsafe|\*)/)
    const error = await a.inject({ url: '/nowhere' })
    expect(error.headers['x-content-type-options']).toBe('nosniff')
  })

  it('sends no CORS headers by default', async () => {
    const { app: a } = await app()
    const res = await a.inject({ url: '/healthz', headers: { origin: 'https://app.example.com' } })
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const preflight = await a.inject({
      method: 'OPTIONS',
      url: '/plants',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    })
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
    // Without CORS, OPTIONS is a method like any other this path does not support.
    expect(preflight.statusCode).toBe(405)
    expect(preflight.headers.allow).toBe('GET, HEAD, POST')
  })

  it('allows exactly the configured CORS origins', async () => {
    const { app: a } = await app({ corsOrigins: ['https://app.example.com'] })
    const preflight = await a.inject({
      method: 'OPTIONS',
      url: '/plants',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    })
    expect(preflight.statusCode).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('Authorization')
    for (const url of ['/plants/1', '/webhooks', '/healthz']) {
      const other = await a.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' },
      })
      expect(other.statusCode).toBe(204)
    }
    const other = await a.inject({ url: '/healthz', headers: { origin: 'https://evil.example.com' } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    const allowed = await a.inject({ url: '/plants/1', headers: { origin: 'https://app.example.com' } })
    expect(allowed.statusCode).toBe(401)
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(String(allowed.headers['access-control-expose-headers'])).toContain('X-Request-Id')
    // A path no route has is refused too, and the script that asked must be able to read why.
    const unknown = await a.inject({ url: '/plant', headers: { origin: 'https://app.example.com' } })
    expect(unknown.statusCode).toBe(404)
    expect(errorOf(unknown).error).toBe(errors.ROUTE_NOT_FOUND.code)
    expect(unknown.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(unknown.headers.vary).toBe('Origin')
    // So must it read why a URL the router cannot decode is refused: no hook, CORS's either, sees it.
    const undecodable = await a.inject({ url: '/plants/%FF', headers: { origin: 'https://app.example.com' } })
    expect(undecodable.statusCode).toBe(400)
    expect(errorOf(undecodable).error).toBe(errors.BAD_REQUEST.code)
    expect(undecodable.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(undecodable.headers.vary).toBe('Origin')
    expect(String(undecodable.headers['access-control-expose-headers'])).toContain('X-Request-Id')
    const foreign = await a.inject({ url: '/plants/%FF', headers: { origin: 'https://evil.example.com' } })
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('lets an allowed origin read why the parser refused its request (400, 408, 414, 431)', async () => {
    const { app: a, token } = await app({
      corsOrigins: ['https://app.example.com'],
      maxHeaderSize: 4096,
      timeouts: { requestTimeoutMs: 300, headersTimeoutMs: 300 },
    })
    const port = await listenLocally(a)
    const origin = 'Origin: https://app.example.com\r\n'
    const head = (answer: string) => answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase()
    const cases: [string, string, string][] = [
      ['400', `GET /healthz HTTP/1.1\r\nHost: x\r\n${origin}Bad Header\r\n\r\n`, '400'],
      ['414', `GET /${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n${origin}\r\n`, '414'],
      ['431', `GET /healthz HTTP/1.1\r\nHost: x\r\n${origin}X-Big: ${'b'.repeat(5000)}\r\n\r\n`, '431'],
      [
        '408',
        `POST /plants HTTP/1.1\r\nHost: x\r\n${origin}Authorization: Bearer ${await token()}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
        '408',
      ],
    ]
    for (const [what, payload, status] of cases) {
      const socket = await openSocket(port)
      const answer = readUntilClose(socket, 5000)
      socket.write(payload)
      const text = await answer
      expect(text.slice(9, 12), what).toBe(status)
      expect(head(text), what).toContain('\r\naccess-control-allow-origin: https://app.example.com\r\n')
      expect(head(text), what).toContain('\r\nvary: origin\r\n')
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toHaveProperty('error')
    }
    // Another origin, or one given twice, is not let read.
    for (const origins of ['Origin: https://evil.example.com\r\n', `${origin}${origin}`]) {
      const text = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: x\r\n${origins}Bad Header\r\n\r\n`)
      expect(text.slice(9, 12)).toBe('400')
      expect(head(text)).not.toContain('access-control-allow-origin')
    }
  })

  it('answers an OPTIONS that is no preflight as it does without CORS: 405 with Allow, or 404', async () => {
    const { app: a } = await app({ corsOrigins: ['https://app.example.com'] })
    for (const headers of [{}, { origin: 'https://app.example.com' }]) {
      const known = await a.inject({ method: 'OPTIONS', url: '/plants', headers })
      expect(known.statusCode).toBe(405)
      expect(errorOf(known).error).toBe(errors.METHOD_NOT_ALLOWED.code)
      expect(known.headers.allow).toBe('GET, HEAD, POST')
      const unknown = await a.inject({ method: 'OPTIONS', url: '/plant', headers })
      expect(unknown.statusCode).toBe(404)
      expect(errorOf(unknown).error).toBe(errors.ROUTE_NOT_FOUND.code)
      expect(unknown.headers.vary).toContain('Origin')
    }
    // A preflight is still answered, on a path of every kind.
    for (const url of ['/plants', '/plants/1', '/healthz', '/docs/static/index.css', '/plant']) {
      const preflight = await a.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'DELETE' },
      })
      expect(preflight.statusCode, url).toBe(204)
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.com')
      expect(preflight.headers['access-control-allow-methods']).toContain('DELETE')
    }
  })

  it('lets a browser on an allowed origin send every request header the document names', async () => {
    const { app: a } = await app({ corsOrigins: ['https://app.example.com'] })
    const document = (await a.inject({ url: '/openapi.json' })).json()
    const named = new Set<string>(['authorization', 'content-type'])
    const collect = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(collect)
      else if (node && typeof node === 'object') {
        const parameter = node as { in?: unknown; name?: unknown }
        if (parameter.in === 'header' && typeof parameter.name === 'string') named.add(parameter.name)
        Object.values(node).forEach(collect)
      }
    }
    collect(document.paths)
    expect(named).toContain('if-none-match')
    const preflight = await a.inject({
      method: 'OPTIONS',
      url: '/plants/1',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'GET',
        'access-control-request-headers': [...named].join(','),
      },
    })
    const allowed = String(preflight.headers['access-control-allow-headers'])
      .toLowerCase()
      .split(/\s*,\s*/)
    for (const header of named) expect(allowed).toContain(header)
  })

  it('lets a browser on an allowed origin read every header the docs document', async () => {
    const { app: a, token } = await app({
      corsOrigins: ['https://app.example.com'],
      rateLimit: { max: 100, windowMs: 60_000 },
    })
    const bearer = await token()
    const origin = 'https://app.example.com'
    const send = (
      method: 'GET' | 'POST' | 'PUT' | 'PATCH',
      url: string,
      headers: Record<string, string> = {},
      payload?: string,
    ) =>
      a.inject({ method, url, payload, headers: { origin, authorization: `Bearer ${bearer}`, ...headers } })
    const create = (id: number) =>
      send(
        'POST',
        '/plants',
        { 'content-type': 'application/json', 'idempotency-key': `k${id}` },
        `{"id": ${id}, "name": "a"}`,
      )
    await create(1)
    await create(2)
    const answers = {
      'WWW-Authenticate': await send('GET', '/plants/1', { authorization: 'Bearer nope' }),
      ETag: await send('GET', '/plants/1'),
      Link: await send('GET', '/plants?limit=1'),
      'X-Total-Count': await send('GET', '/plants?count=true'),
      'Idempotent-Replayed': await create(1),
      Allow: await send('PUT', '/plants'),
      'Accept-Patch': await send('PATCH', '/plants/1', { 'content-type': 'text/plain' }, 'a'),
      'RateLimit-Remaining': await send('GET', '/plants/2'),
      'X-Request-Id': await send('GET', '/plants/2'),
    }
    for (const [header, res] of Object.entries(answers)) {
      expect(res.headers[header.toLowerCase()], header).toBeDefined()
      const exposed = String(res.headers['access-control-expose-headers']).split(/\s*,\s*/)
      expect(exposed, header).toContain(header)
    }
    const exposed = String(answers.ETag.headers['access-control-expose-headers']).split(/\s*,\s*/)
    for (const header of ['Location', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Reset']) {
      expect(exposed).toContain(header)
    }
  })
})

describe('the rate limiter counters', () => {
  it('forget the key counted longest ago past 20,000 keys, so memory stays bounded', async () => {
    const fastify = (await import('fastify')).default()
    try {
      const { installRateLimits } = await import('../../src/http/rate-limit.js')
      const limits = await installRateLimits(fastify, { token: { max: 1, windowMs: 60_000 } })
      const limiter = limits.token as NonNullable<typeof limits.token>
      expect(await limiter('token:first')).toMatchObject({ 'ratelimit-remaining': '0' })
      await expect(limiter('token:first')).rejects.toMatchObject({ entry: errors.RATE_LIMITED })
      for (let i = 0; i < 20_000; i++) await limiter(`address:${i}`)
      // Forgotten: its window starts again.
      expect(await limiter('token:first')).toMatchObject({ 'ratelimit-remaining': '0' })
      // The newest keys are still counted.
      await expect(limiter('address:19999')).rejects.toMatchObject({ entry: errors.RATE_LIMITED })
    } finally {
      await fastify.close()
    }
  })
})
