import { once } from 'node:events'
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { type AppOptions, buildApp } from '../../src/app.js'
import { createLogger } from '../../src/log.js'
import { createMetrics, type Metrics } from '../../src/metrics/registry.js'
import { type DatabaseLocation, openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { createJwtVerifier } from '../../src/tokens/jwt.js'
import type { Scope } from '../../src/tokens/scopes.js'
import { TokenService } from '../../src/tokens/service.js'
import { type ContractWatch, watchContract } from '../helpers/contract.js'
import { AUDIENCE, ISSUER, serveJwks, signingKey, signJwt } from '../helpers/jwks.js'
import { captureLines } from '../helpers/log.js'
import { openFresh, postgresKind, type StoreKind, sqliteKind, storeKinds } from '../helpers/stores.js'

interface Instance {
  app: FastifyInstance
  store: Store
  tokens: TokenService
  metrics: Metrics
  port: number
  lifecycle: { draining: boolean }
  /** Records what the injected responses were checked against in the published document. */
  contract: ContractWatch
  token(scopes?: Scope[]): Promise<string>
  create(id: number, name?: string): Promise<void>
}

interface StreamClient {
  status: number
  headers: IncomingHttpHeaders
  /** Everything received so far. */
  text(): string
  /** The events received so far: id and parsed data. */
  events(): Array<{
    id: string
    data: { cursor: string; type: string; after: { id: number; name: string } | null }
  }>
  waitFor(test: (text: string) => boolean, ms?: number): Promise<void>
  /** Settles when the server has ended the response (or cut the connection). */
  ended: Promise<void>
  close(): void
}

const instances: Instance[] = []
const clients: StreamClient[] = []
afterEach(async () => {
  for (const client of clients.splice(0)) client.close()
  for (const instance of instances.splice(0)) {
    instance.contract.done()
    await instance.app.close()
    await instance.store.close()
  }
})

const FAST = { heartbeatMs: 60_000, checkMs: 50, pollMs: 200 }

async function start(
  kind: StoreKind,
  options: Partial<AppOptions> & { url?: string; now?: () => number } = {},
): Promise<Instance & { url: string }> {
  const opened = options.url
    ? { store: await openStore(parseDatabaseUrl(options.url) as DatabaseLocation), url: options.url }
    : await openFresh(kind)
  const { store, url } = opened
  const { url: _url, now: _now, ...appOptions } = options
  const tokens = new TokenService(store.tokens, options.now ? { now: options.now } : {})
  const metrics = createMetrics()
  const lifecycle = { draining: false }
  const app = await buildApp({
    store,
    tokens,
    metrics,
    lifecycle,
    bodyLimit: 1024 * 1024,
    streamTimings: FAST,
    ...appOptions,
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  // Every injected response is checked against the document, and its error codes count as received.
  const contract = watchContract(app)
  const port = (app.server.address() as { port: number }).port
  const writer = (await tokens.create('writer', ['plants:write'])).token
  const instance = {
    app,
    store,
    tokens,
    metrics,
    port,
    lifecycle,
    contract,
    url,
    token: async (scopes: Scope[] = ['events:read']) => (await tokens.create('reader', scopes)).token,
    create: async (id: number, name = `plant ${id}`) => {
      const response = await app.inject({
        method: 'POST',
        url: '/plants',
        headers: { authorization: `Bearer ${writer}` },
        payload: { id, name },
      })
      expect(response.statusCode).toBe(200)
    },
  }
  instances.push(instance)
  return instance
}

function openStream(
  port: number,
  { path = '/events/stream', headers = {} }: { path?: string; headers?: Record<string, string> } = {},
): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res: IncomingMessage) => {
      let text = ''
      const waiters = new Set<() => void>()
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        for (const waiter of waiters) waiter()
      })
      const ended = new Promise<void>((done) => {
        res.once('end', done)
        res.once('close', done)
        res.once('error', () => done())
      })
      const client: StreamClient = {
        status: res.statusCode as number,
        headers: res.headers,
        text: () => text,
        events: () =>
          [...text.matchAll(/^id: (.*)\ndata: (.*)\n\n/gm)].map((m) => ({
            id: m[1] as string,
            data: JSON.parse(m[2] as string),
          })),
        waitFor: (test, ms = 5000) =>
          new Promise((done, fail) => {
            if (test(text)) return done()
            const timer = setTimeout(() => {
              waiters.delete(check)
              fail(new Error(`not received within ${ms} ms; got: ${text}`))
            }, ms)
            const check = () => {
              if (!test(text)) return
              clearTimeout(timer)
              waiters.delete(check)
              done()
            }
            waiters.add(check)
          }),
        ended,
        close: () => req.destroy(),
      }
      clients.push(client)
      resolve(client)
    })
    req.on('error', reject)
    req.end()
  })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
/** Responses of GET /events/stream counted with status 200. */
const streamResponses = async (metrics: Metrics) =>
  (await metrics.httpRequests.get()).values.find(
    (v) => v.labels.route === '/events/stream' && v.labels.status === '200',
  )?.value ?? 0
const endsOf = async (metrics: Metrics, reason: string) =>
  (await metrics.eventStreamEnds.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0

describe.each(storeKinds)('GET /events/stream ($name)', (kind) => {
  it('sends the status and headers at once, before any change, then each change as it is committed', async () => {
    const instance = await start(kind)
    const stream = await openStream(instance.port, { headers: bearer(await instance.token()) })
    // The response arrived with no change made at all.
    expect(stream.status).toBe(200)
    expect(stream.headers['content-type']).toBe('text/event-stream')
    expect(stream.headers['cache-control']).toBe('no-store')
    expect(stream.headers['x-request-id']).toMatch(/.+/)
    expect(stream.headers['x-content-type-options']).toBe('nosniff')
    expect(stream.headers['content-encoding']).toBeUndefined()
    expect(stream.events()).toEqual([])

    await instance.create(1)
    await instance.create(2)
    await stream.waitFor(() => stream.events().length === 2)
    const [first, second] = stream.events()
    expect(first?.id).toBe(first?.data.cursor)
    expect(first?.data.type).toBe('plant.created')
    expect(second?.data.after).toEqual({ id: 2, name: 'plant 2' })
    expect(Number(second?.id)).toBeGreaterThan(Number(first?.id))
    expect((await instance.metrics.eventStreams.get()).values[0]?.value).toBe(1)
  })

  it('starts at the present without Last-Event-ID: changes made before it opened are not sent', async () => {
    const instance = await start(kind)
    for (const id of [1, 2, 3]) await instance.create(id)
    const stream = await openStream(instance.port, { headers: bearer(await instance.token()) })
    await instance.create(4)
    await stream.waitFor(() => stream.events().length >= 1)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(stream.events().map((e) => e.data.after?.id)).toEqual([4])
  })

  it('resumes right after Last-Event-ID (or after=), each change once, then goes on live', async () => {
    const instance = await start(kind)
    const token = await instance.token()
    const seen = await openStream(instance.port, { headers: bearer(token) })
    for (const id of [1, 2, 3]) await instance.create(id)
    await seen.waitFor(() => seen.events().length === 3)
    const firstCursor = seen.events()[0]?.id as string

    const resumed = await openStream(instance.port, {
      headers: { ...bearer(token), 'last-event-id': firstCursor },
    })
    const byQuery = await openStream(instance.port, {
      path: `/events/stream?after=${firstCursor}`,
      headers: bearer(token),
    })
    for (const stream of [resumed, byQuery]) await stream.waitFor(() => stream.events().length === 2)
    await instance.create(4)
    for (const stream of [resumed, byQuery]) {
      await stream.waitFor(() => stream.events().length === 3)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(stream.events().map((e) => e.data.after?.id)).toEqual([2, 3, 4])
    }
    // Last-Event-ID, which a reconnecting EventSource sends, wins over the URL's after.
    const both = await openStream(instance.port, {
      path: `/events/stream?after=${firstCursor}`,
      headers: { ...bearer(token), 'last-event-id': seen.events()[2]?.id as string },
    })
    await both.waitFor(() => both.events().length === 1)
    expect(both.events()[0]?.data.after?.id).toBe(4)
  })

  it('refuses a cursor it never gave out with 400, and one below the retention horizon with 410, before streaming', async () => {
    const instance = await start(kind)
    const token = await instance.token()
    for (const header of ['abc', '-1', '01', '1.5', '99999999999999999999']) {
      const response = await instance.app.inject({
        url: '/events/stream',
        headers: { ...bearer(token), 'last-event-id': header },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({
        error: 40080,
        message: 'The Last-Event-ID header must be the id of a change this service sent.',
      })
    }
    const byQuery = await instance.app.inject({ url: '/events/stream?after=x', headers: bearer(token) })
    expect(byQuery.statusCode).toBe(400)
    expect(byQuery.json()).toEqual({
      error: 40080,
      message: "The query parameter after must be a change's cursor.",
    })

    for (const id of [1, 2]) await instance.create(id)
    await instance.store.maintenance.sweep({
      now: new Date(),
      eventsBefore: new Date(Date.now() + 60_000),
      tokensBefore: new Date(0),
    })
    const horizon = await instance.store.events.retentionHorizon()
    expect(horizon).toBeGreaterThan(0)
    const gone = await instance.app.inject({
      url: '/events/stream',
      headers: { ...bearer(token), 'last-event-id': String(horizon - 1) },
    })
    expect(gone.statusCode).toBe(410)
    expect(gone.json()).toMatchObject({ error: 41001 })
    // At the horizon itself nothing after it is gone.
    const kept = await openStream(instance.port, {
      headers: { ...bearer(token), 'last-event-id': String(horizon) },
    })
    expect(kept.status).toBe(200)
  })

  it('refuses HEAD, which would hold a stream open for a body nobody is sent', async () => {
    const instance = await start(kind)
    // Over the socket: like every wrong method's 405, it is documented for the service, not the operation.
    const token = await instance.token()
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: instance.port,
          path: '/events/stream',
          method: 'HEAD',
          headers: bearer(token),
        },
        resolve,
      )
      req.on('error', reject)
      req.end()
    })
    response.resume()
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('GET')
  })

  it('needs a token with events:read', async () => {
    const instance = await start(kind)
    const none = await instance.app.inject({ url: '/events/stream' })
    expect(none.statusCode).toBe(401)
    const other = await instance.app.inject({
      url: '/events/stream',
      headers: bearer(await instance.token(['plants:read'])),
    })
    expect(other.statusCode).toBe(403)
    expect(other.json()).toMatchObject({ error: 40301 })
  })

  it('ends the stream of a revoked token within the revocation bound', async () => {
    const instance = await start(kind)
    const created = await instance.tokens.create('reader', ['events:read'])
    const stream = await openStream(instance.port, { headers: bearer(created.token) })
    await instance.tokens.revoke(created.record.id)
    const started = Date.now()
    await stream.ended
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await endsOf(instance.metrics, 'revoked')).toBe(1)
    expect((await instance.metrics.eventStreams.get()).values[0]?.value).toBe(0)
  })
})

describe('GET /events/stream: limits, heartbeat, backlog, draining', () => {
  it('sends a heartbeat comment on the interval', async () => {
    const instance = await start(sqliteKind, { streamTimings: { ...FAST, heartbeatMs: 50 } })
    const stream = await openStream(instance.port, { headers: bearer(await instance.token()) })
    await stream.waitFor((text) => text.split(': heartbeat\n\n').length >= 3, 2000)
  })

  it('refuses a stream past --max-streams with 503, the Error shape and Retry-After', async () => {
    const instance = await start(sqliteKind, { maxStreams: 1 })
    const token = await instance.token()
    const first = await openStream(instance.port, { headers: bearer(token) })
    expect(first.status).toBe(200)
    const refused = await instance.app.inject({ url: '/events/stream', headers: bearer(token) })
    expect(refused.statusCode).toBe(503)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.json()).toMatchObject({ error: 50302 })
    first.close()
    await first.ended
    // The place is free again once the server has seen the client go.
    await expect
      .poll(
        async () =>
          (await instance.app.inject({ url: '/events/stream?after=x', headers: bearer(token) })).statusCode,
      )
      .toBe(400)
    await expect.poll(async () => (await instance.metrics.eventStreams.get()).values[0]?.value).toBe(0)
    expect(await endsOf(instance.metrics, 'client')).toBe(1)
  })

  it('keeps a reader that reads through a burst of changes larger than the bound, live or catching up', async () => {
    const instance = await start(sqliteKind, { streamTimings: { ...FAST, backlogBytes: 128 * 1024 } })
    const token = await instance.token()
    const stream = await openStream(instance.port, { headers: bearer(token) })
    const writer = (await instance.tokens.create('batch', ['plants:write'])).token
    const name = 'y'.repeat(200)
    for (const first of [1, 1001, 2001]) {
      const plants = Array.from({ length: 1000 }, (_, i) => ({ id: first + i, name }))
      const response = await instance.app.inject({
        method: 'POST',
        url: '/plants/batch',
        headers: bearer(writer),
        payload: { plants },
      })
      expect(response.statusCode).toBe(200)
    }
    await stream.waitFor(() => stream.events().length === 3000, 20_000)
    // Resuming from the start, it catches up at its own pace.
    const late = await openStream(instance.port, { headers: { ...bearer(token), 'last-event-id': '0' } })
    await late.waitFor(() => late.events().length === 3000, 20_000)
    expect(late.events().map((e) => e.data.after?.id)).toEqual(stream.events().map((e) => e.data.after?.id))
    expect(await endsOf(instance.metrics, 'backlog')).toBe(0)
  }, 30_000)

  it('cuts off a reader that does not read once its backlog passes the bound, and it resumes from its last id', async () => {
    const instance = await start(sqliteKind, { streamTimings: { ...FAST, backlogBytes: 128 * 1024 } })
    const token = await instance.token()
    // A client that reads the head of the response and then nothing.
    const socket: Socket = connect(instance.port, '127.0.0.1')
    await once(socket, 'connect')
    socket.write(`GET /events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    const [head] = (await once(socket, 'data')) as [Buffer]
    expect(head.toString()).toMatch(/^HTTP\/1\.1 200 OK/)
    socket.pause()
    let received = ''
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString()
    })
    const closed = once(socket, 'close')
    const name = 'x'.repeat(200)
    const writer = (await instance.tokens.create('batch', ['plants:write'])).token
    let next = 1
    while ((await endsOf(instance.metrics, 'backlog')) === 0) {
      const plants = Array.from({ length: 1000 }, () => ({ id: next++, name }))
      const response = await instance.app.inject({
        method: 'POST',
        url: '/plants/batch',
        headers: bearer(writer),
        payload: { plants },
      })
      expect(response.statusCode).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(next).toBeLessThan(100_000)
    }
    socket.resume()
    await closed
    expect((await instance.metrics.eventStreams.get()).values[0]?.value).toBe(0)
    // What arrived whole ends with some change; resuming after it gives the next one, and so on.
    const ids = [...received.matchAll(/id: (\d+)\ndata: [^\n]*\n\n/g)].map((m) => m[1] as string)
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.length).toBeLessThan(next - 1)
    const resumed = await openStream(instance.port, {
      headers: { ...bearer(token), 'last-event-id': ids.at(-1) as string },
    })
    await resumed.waitFor(() => resumed.events().length > 0)
    expect(Number(resumed.events()[0]?.id)).toBe(Number(ids.at(-1)) + 1)
    expect(resumed.events()[0]?.data.after?.id).toBe(ids.length + 1)
  }, 60_000)

  it('ends its streams when the instance drains, and at close, without holding the close up', async () => {
    const instance = await start(sqliteKind)
    const token = await instance.token()
    const stream = await openStream(instance.port, { headers: bearer(token) })
    instance.lifecycle.draining = true
    await stream.ended
    expect(await endsOf(instance.metrics, 'draining')).toBe(1)
    // Counted once as a request, as a stream its client left is.
    await expect.poll(() => streamResponses(instance.metrics)).toBe(1)

    instance.lifecycle.draining = false
    const left = await openStream(instance.port, { headers: bearer(token) })
    left.close()
    await expect.poll(() => endsOf(instance.metrics, 'client')).toBe(1)
    await expect.poll(() => streamResponses(instance.metrics)).toBe(2)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(await streamResponses(instance.metrics)).toBe(2)
    const open = await openStream(instance.port, { headers: bearer(token) })
    const started = Date.now()
    instances.splice(instances.indexOf(instance), 1)
    instance.contract.done()
    await instance.app.close()
    await instance.store.close()
    await open.ended
    expect(Date.now() - started).toBeLessThan(3000)
  })
})

describe.each(storeKinds)('stream tickets ($name)', (kind) => {
  it('a ticket opens a stream without an Authorization header, for the token that asked for it', async () => {
    let now = Date.now()
    const instance = await start(kind, { now: () => now })
    const created = await instance.tokens.create('browser', ['events:read'])
    const issued = await instance.app.inject({
      method: 'POST',
      url: '/events/tickets',
      headers: bearer(created.token),
    })
    expect(issued.statusCode).toBe(200)
    const { ticket, expiresAt } = issued.json() as { ticket: string; expiresAt: string }
    expect(Date.parse(expiresAt) - now).toBe(60_000)
    expect(ticket).not.toContain(created.token.slice(-43))

    const stream = await openStream(instance.port, { path: `/events/stream?ticket=${ticket}` })
    expect(stream.status).toBe(200)
    await instance.create(1)
    await stream.waitFor(() => stream.events().length === 1)

    // Forged or altered, and expired, tickets are refused.
    const altered = `${ticket.slice(0, -2)}${ticket.endsWith('AA') ? 'BB' : 'AA'}`
    for (const bad of [altered, 'pst_tk_e30_xyz', 'nonsense']) {
      const response = await instance.app.inject({ url: `/events/stream?ticket=${encodeURIComponent(bad)}` })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toEqual({ error: 40120, message: 'The stream ticket is not valid.' })
    }
    now += 60_001
    const expired = await instance.app.inject({ url: `/events/stream?ticket=${ticket}` })
    expect(expired.statusCode).toBe(401)
    expect(expired.json()).toMatchObject({ error: 40121 })
    // A ticket is no bearer token.
    const asBearer = await instance.app.inject({ url: '/events/stream', headers: bearer(ticket) })
    expect(asBearer.statusCode).toBe(401)
  })

  it('a ticket needs events:read to get, and its stream ends when its token is revoked', async () => {
    const instance = await start(kind)
    const refused = await instance.app.inject({
      method: 'POST',
      url: '/events/tickets',
      headers: bearer(await instance.token(['plants:read'])),
    })
    expect(refused.statusCode).toBe(403)
    const created = await instance.tokens.create('browser', ['events:read'])
    const { ticket } = (
      await instance.app.inject({ method: 'POST', url: '/events/tickets', headers: bearer(created.token) })
    ).json() as { ticket: string }
    const stream = await openStream(instance.port, { path: `/events/stream?ticket=${ticket}` })
    await instance.tokens.revoke(created.record.id)
    await stream.ended
    expect(await endsOf(instance.metrics, 'revoked')).toBe(1)
    const again = await instance.app.inject({ url: `/events/stream?ticket=${ticket}` })
    expect(again.statusCode).toBe(401)
    expect(again.json()).toMatchObject({ error: 40105 })
  })
})

describe('a JWT’s stream', () => {
  it('ends at the JWT’s exp, and so does the stream of a ticket it got', async () => {
    const key = await signingKey('ES256', 'ec-1')
    const jwks = await serveJwks([key])
    try {
      const jwts = createJwtVerifier({
        jwksUrl: jwks.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        scopeClaim: 'scope',
        clockToleranceMs: 0,
      })
      const instance = await start(sqliteKind, { jwts })
      const exp = Math.floor(Date.now() / 1000) + 2
      const jwt = await signJwt(key, { scope: 'events:read', exp })
      const stream = await openStream(instance.port, { headers: bearer(jwt) })
      expect(stream.status).toBe(200)
      const { ticket, expiresAt } = (
        await instance.app.inject({ method: 'POST', url: '/events/tickets', headers: bearer(jwt) })
      ).json() as { ticket: string; expiresAt: string }
      // A ticket never outlives the token it was issued for.
      expect(Date.parse(expiresAt)).toBe(exp * 1000)
      const byTicket = await openStream(instance.port, { path: `/events/stream?ticket=${ticket}` })
      expect(byTicket.status).toBe(200)
      await Promise.all([stream.ended, byTicket.ended])
      expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000)
      expect(await endsOf(instance.metrics, 'expired')).toBe(2)
    } finally {
      await jwks.close()
    }
  }, 10_000)
})

describe('a stream ticket in the log', () => {
  it('is never written, nor the token', async () => {
    const { lines, stream: destination } = captureLines()
    const logger = createLogger('debug', destination)
    const instance = await start(sqliteKind, { logger: logger as unknown as AppOptions['logger'] })
    const created = await instance.tokens.create('browser', ['events:read'])
    const { ticket } = (
      await instance.app.inject({ method: 'POST', url: '/events/tickets', headers: bearer(created.token) })
    ).json() as { ticket: string }
    const stream = await openStream(instance.port, { path: `/events/stream?ticket=${ticket}` })
    stream.close()
    await stream.ended
    await expect.poll(() => lines.filter((line) => line.includes('/events/stream')).length).toBe(1)
    // A refused one, altered, is not written either.
    const altered = `${ticket.slice(0, 20)}x${ticket.slice(21)}`
    const refused = await instance.app.inject({ url: `/events/stream?ticket=${altered}` })
    expect(refused.statusCode).toBe(401)
    await expect.poll(() => lines.filter((line) => line.includes('/events/stream')).length).toBe(2)
    const logged = lines.join('')
    expect(logged).not.toContain(ticket.slice(7, 40))
    expect(logged).not.toContain(altered.slice(22, 40))
    expect(logged).not.toContain(created.token.slice(-43))
  })
})

describe.runIf(postgresKind)('GET /events/stream across instances (postgres)', () => {
  it('a change made through one instance reaches a stream on another', async () => {
    // No poll to fall back on: the other instance's NOTIFY is what wakes the stream.
    const timings = { ...FAST, pollMs: 60_000 }
    const first = await start(postgresKind as StoreKind, { streamTimings: timings })
    const second = await start(postgresKind as StoreKind, { url: first.url, streamTimings: timings })
    const token = await first.token()
    const stream = await openStream(second.port, { headers: bearer(token) })
    await first.create(1)
    await stream.waitFor(() => stream.events().length === 1)
    expect(stream.events()[0]?.data.after?.id).toBe(1)
    // A ticket one instance issued opens a stream on the other.
    const { ticket } = (
      await first.app.inject({ method: 'POST', url: '/events/tickets', headers: bearer(token) })
    ).json() as { ticket: string }
    const byTicket = await openStream(second.port, { path: `/events/stream?ticket=${ticket}` })
    expect(byTicket.status).toBe(200)
    await first.create(2)
    await byTicket.waitFor(() => byTicket.events().length === 1)
  })
})
