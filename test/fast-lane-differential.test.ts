import type { IncomingMessage, ServerResponse } from 'node:http'
import { connect } from 'node:net'
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../src/app.js'
import { FastLane } from '../src/http/fast-lane.js'
import { createMetrics, type Metrics } from '../src/metrics/registry.js'
import type { Store } from '../src/store/types.js'
import type { Scope } from '../src/tokens/scopes.js'
import { TokenService } from '../src/tokens/service.js'
import { listenLocally } from './helpers/app.js'
import { captureLines } from './helpers/log.js'
import { openFresh, sqliteKind } from './helpers/stores.js'

// Generated requests sent over raw sockets to two services with the same plants and the same kinds
// of token: one where the fast lane (src/http/fast-lane.ts) takes what it can, one where it takes
// nothing and Fastify answers everything. Whatever the request, the two answers are the same status,
// headers (in the same order) and bytes: the lane is a shortcut, never a second behaviour.

const KINDS = ['rw', 'read', 'write', 'revoked', 'expired', 'unknown'] as const
type TokenKind = (typeof KINDS)[number]

interface Service {
  app: FastifyInstance
  metrics: Metrics
  logged: string[]
  store: Store
  port: number
  tokens: Record<TokenKind, string>
}

const SEEDED = [
  '{"id": -9223372036854775808, "name": "min"}',
  '{"id": -5, "name": "negative", "tag": "aroid"}',
  '{"id": 0, "name": "zero"}',
  '{"id": 7, "name": "seven", "tag": "fern"}',
  '{"id": 9007199254740993, "name": "\\"q\\" \\u2028 🌵", "tag": "aroid"}',
  '{"id": 9223372036854775807, "name": "max", "tag": "fern"}',
]

async function service(): Promise<Service> {
  const { store } = await openFresh(sqliteKind)
  const metrics = createMetrics()
  const tokenService = new TokenService(store.tokens, {
    onVerify: (cache) => metrics.tokenVerifications.inc({ cache }),
  })
  const { lines: logged, stream } = captureLines()
  const logger = pino({ level: 'info' }, stream)
  const app = await buildApp({ store, tokens: tokenService, metrics, logger })
  const port = await listenLocally(app)
  const make = async (scopes: Scope[], expiresInMs?: number) =>
    (await tokenService.create('t', scopes, expiresInMs)).token
  const tokens: Record<TokenKind, string> = {
    rw: await make(['plants:read', 'plants:write']),
    read: await make(['plants:read']),
    write: await make(['plants:write']),
    revoked: await make(['plants:read', 'plants:write']),
    expired: await make(['plants:read', 'plants:write'], 50),
    unknown: 'pst_0000000000000000_notatokenatall0000000000',
  }
  // Every real token is one the process has verified before, so the lane may take it.
  for (const kind of ['rw', 'read', 'write', 'revoked', 'expired'] as const) {
    await tokenService.verify(tokens[kind])
  }
  const revokedId = tokens.revoked.split('_')[1] as string
  await tokenService.revoke(revokedId)
  for (const body of SEEDED) {
    const res = await app.inject({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${tokens.rw}`, 'content-type': 'application/json' },
      payload: body,
    })
    expect(res.statusCode).toBe(200)
  }
  return { app, metrics, logged, store, port, tokens }
}

/** A request as generated: the token is named by kind, and each service gets its own. */
interface Generated {
  method: string
  path: string
  headers: [string, string][]
  body: Buffer
  length: 'exact' | 'none'
}

function render(g: Generated, s: Service): Buffer {
  const lines = [`${g.method} ${g.path} HTTP/1.1`, 'Host: 127.0.0.1', 'X-Request-Id: differential']
  for (const [name, value] of g.headers) {
    lines.push(`${name}: ${value.replace(/\{token:(\w+)\}/g, (_m, k: TokenKind) => s.tokens[k])}`)
  }
  // Without a length, the bytes after the head would be read as the next request: none are sent.
  if (g.length === 'none') return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
  lines.push(`Content-Length: ${g.body.length}`)
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), g.body])
}

interface Answer {
  status: string
  headers: string[]
  body: string
}

// Set per answer or per connection by Node, not by the application.
const UNCOMPARED = new Set(['date'])
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Parses one answer off the front of `data`: the answer and what follows it, or undefined if incomplete. */
function oneAnswer(data: Buffer, method: string): { answer: Answer; rest: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return undefined
  const head = data.subarray(0, end).toString('latin1').split('\r\n')
  const status = head[0] as string
  const headers = head
    .slice(1)
    .map((line) => {
      const colon = line.indexOf(':')
      const value = line.slice(colon + 1).trim()
      // A request id made up for a request refused before its own was read differs each time.
      return `${line.slice(0, colon).toLowerCase()}: ${UUID.test(value) ? '(uuid)' : value}`
    })
    // Kept in the order sent: the lane's header block is the framework's byte for byte, not merely
    // the same set of fields.
    .filter((line) => !UNCOMPARED.has(line.slice(0, line.indexOf(':'))))
  const length = headers.find((h) => h.startsWith('content-length: '))
  const expected = method === 'HEAD' || / 304 /.test(status) ? 0 : length ? Number(length.slice(16)) : -1
  const body = data.subarray(end + 4)
  if (expected < 0 || body.length < expected) return undefined
  return {
    answer: { status, headers, body: body.subarray(0, expected).toString('latin1') },
    rest: body.subarray(expected),
  }
}

/**
 * Sends the requests pipelined on one fresh connection and reads their answers, as many as come
 * before the server closes the connection (or the time runs out), and whatever bytes are left.
 */
function exchange(port: number, bytes: Buffer, methods: string[]): Promise<(Answer | string)[]> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    let data: Buffer = Buffer.alloc(0)
    const answers: (Answer | string)[] = []
    let done = false
    const finish = (closed: boolean) => {
      if (done) return
      for (;;) {
        const method = methods[answers.length]
        const parsed = method === undefined ? undefined : oneAnswer(data, method)
        if (parsed === undefined) break
        answers.push(parsed.answer)
        data = parsed.rest
      }
      if (answers.length < methods.length && !closed) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (data.length > 0) answers.push(`(left over) ${data.toString('latin1')}`)
      resolve(answers)
    }
    const timer = setTimeout(() => finish(true), 3000)
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      finish(false)
    })
    socket.on('end', () => finish(true))
    socket.on('error', () => finish(true))
    socket.write(bytes)
  })
}

// ---- generators ----

const int64Text = fc.oneof(
  fc.constantFrom('0', '7', '-5', '9223372036854775807', '-9223372036854775808', '9007199254740993'),
  fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n).map(String),
)

const idText = fc.oneof(
  { weight: 8, arbitrary: int64Text },
  {
    weight: 6,
    arbitrary: fc.oneof(
      int64Text.map((d) => `0${d}`),
      int64Text.map((d) => `+${d}`),
      int64Text.map((d) => `%20${d}`),
      int64Text.map((d) => `${d}%20`),
      int64Text.map((d) => d.replace(/[0-9]/, (c) => `%3${c}`)),
      int64Text.map((d) => `${d}/`),
      int64Text.map((d) => `/${d}`),
      int64Text.map((d) => `${d}0000`),
      int64Text.map((d) => `${d}.0`),
      int64Text.map((d) => `${d}e0`),
      fc.constantFrom(
        '-0',
        '00',
        '9223372036854775808',
        '-9223372036854775809',
        '99999999999999999999',
        '1'.repeat(40),
        'seven',
        '',
        '%',
        '%FF',
        '0x10',
        '1_000',
        '٣',
        '7;x',
        '7%00',
        '--1',
      ),
    ),
  },
)

const queryValue = fc.oneof(
  fc.constantFrom('1', '2', '100', '101', '0', '-1', '', '01', '1.0', '2e1', '+1'),
  int64Text,
  fc.constantFrom('aroid', 'fern', 'a%20b', 'a+b', '%61roid', 'x'.repeat(101), 'x'.repeat(100), '%FF', '%00'),
)

const queryPair = fc
  .tuple(
    fc.constantFrom('limit', 'after', 'tag', 'limit', 'after', 'tag', 'Limit', 'colour', '', 'li%6Dit'),
    fc.option(queryValue, { freq: 10 }),
  )
  .map(([name, value]) => (value === null ? name : `${name}=${value}`))

const query = fc.oneof(
  fc.constant(''),
  fc.constant('?'),
  fc.array(queryPair, { minLength: 1, maxLength: 3 }).map((pairs) => `?${pairs.join('&')}`),
  fc.array(queryPair, { minLength: 1, maxLength: 2 }).map((pairs) => `?${pairs.join('&')}&`),
  fc.array(queryPair, { minLength: 1, maxLength: 2 }).map((pairs) => `?${pairs.join(';')}`),
)

const path = fc.oneof(
  { weight: 5, arbitrary: idText.map((id) => `/plants/${id}`) },
  { weight: 1, arbitrary: fc.tuple(idText, query).map(([id, q]) => `/plants/${id}${q}`) },
  { weight: 5, arbitrary: query.map((q) => `/plants${q}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('/plants/', '//plants', '/plants//7', '/Plants', '/plants%2F7', '/plants#x'),
  },
)

const authorization = fc.oneof(
  { weight: 12, arbitrary: fc.constant('Bearer {token:rw}') },
  { weight: 6, arbitrary: fc.constantFrom<TokenKind>(...KINDS).map((k) => `Bearer {token:${k}}`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'bearer {token:rw}',
      'BEARER {token:rw}',
      'Bearer  {token:rw}',
      'Bearer {token:rw} ',
      'Bearer\t{token:rw}',
      'Bearer',
      'Bearer ',
      'Basic {token:rw}',
      'Token {token:rw}',
      'Bearer {token:rw}x',
      'Bearer {token:rw} {token:rw}',
    ),
  },
)

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
  'application/json; charset=UTF-8',
  'Application/JSON',
  'application/json; charset="utf-8"',
  'application/json ; charset=utf-8',
  'application/json; charset=utf-8; x=y',
  'application/json; charset=iso-8859-1',
  'application/json;',
  'application/merge-patch+json',
  'text/plain',
  'application/jsonx',
  '',
)

const optionalHeader = fc.oneof(
  fc.constantFrom<[string, string]>(
    ['Accept', 'application/json'],
    ['Accept', 'text/html'],
    ['Accept', '*/*'],
    ['Accept-Encoding', 'gzip'],
    ['Accept-Encoding', 'identity'],
    ['Accept-Encoding', ''],
    ['Accept-Encoding', 'br;q=0'],
    ['If-None-Match', '*'],
    ['If-None-Match', '"x"'],
    ['If-Match', '*'],
    ['Idempotency-Key', 'k'],
    ['Content-Encoding', 'gzip'],
    ['Content-Encoding', 'identity'],
    ['Connection', 'close'],
    ['Connection', 'keep-alive'],
    ['Cache-Control', 'no-cache'],
    ['X-Forwarded-For', '10.0.0.1'],
  ),
  contentType.map((t): [string, string] => ['Content-Type', t]),
)

const name = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.constantFrom('', 'a\u0001b', 'x'.repeat(200), 'x'.repeat(201), '\ud800', '🌵'.repeat(200), 'tab\there'),
)

let nextId = 1_000_000
const plantBody = fc
  .tuple(
    fc.oneof(
      fc.constant<'fresh'>('fresh'),
      fc.constantFrom('7', '9223372036854775807', '-9223372036854775808', '9223372036854775808'),
      fc.constantFrom('"8"', '1.0', '1e3', '-0', '1.5', 'null', 'true', '[1]'),
    ),
    name,
    fc.option(name),
    fc.constantFrom(
      '',
      ', "colour": "green"',
      ', "nested": {"a": [1, {"b": null}]}',
      ', "id": 3',
      ', "name": "dup"',
    ),
  )
  .map(([id, n, tag, extra]) => {
    const idText = id === 'fresh' ? String(nextId++) : id
    const tagPart = tag === null ? '' : `, "tag": ${JSON.stringify(tag)}`
    return Buffer.from(`{"id": ${idText}, "name": ${JSON.stringify(n)}${tagPart}${extra}}`)
  })

const body = fc.oneof(
  { weight: 6, arbitrary: plantBody },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      Buffer.alloc(0),
      Buffer.from(' '),
      Buffer.from('null'),
      Buffer.from('[]'),
      Buffer.from('{'),
      Buffer.from('{"id": 5000001, "name": "a'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id": 5000002, "name": "bom"}')]),
      Buffer.concat([Buffer.from('{"id": 5000003, "name": "a'), Buffer.from([0xff]), Buffer.from('"}')]),
      Buffer.from(`{"id": 5000004, "name": "x", "deep": ${'['.repeat(3000)}${']'.repeat(3000)}}`),
      Buffer.from(`{"id": 5000005, "name": "${'n'.repeat(70_000)}"}`),
      Buffer.from('{"id": 5000006, "name": "x"} trailing'),
      Buffer.from('{"id": 5000007, "name": "x", "__proto__": {"id": 1}}'),
    ),
  },
)

const request = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD'),
      path,
      headers: fc
        .tuple(
          fc.option(authorization, { freq: 8 }),
          fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, fc.array(optionalHeader, { maxLength: 2 })),
        )
        .map(([auth, rest]) => [
          ...(auth === null ? [] : [['Authorization', auth] as [string, string]]),
          ...rest,
        ]),
      body: fc.oneof({ weight: 5, arbitrary: fc.constant(Buffer.alloc(0)) }, { weight: 1, arbitrary: body }),
      length: fc.constantFrom<'exact' | 'none'>('exact', 'none'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      method: fc.constant('POST'),
      path: fc.oneof(
        { weight: 8, arbitrary: fc.constant('/plants') },
        { weight: 1, arbitrary: fc.constantFrom('/plants?', '/plants/', '/plants?x=1', '/plants/7') },
      ),
      headers: fc
        .tuple(
          fc.option(authorization, { freq: 8 }),
          fc.option(contentType, { freq: 8 }),
          fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, fc.array(optionalHeader, { maxLength: 2 })),
        )
        .map(([auth, type, rest]) => [
          ...(auth === null ? [] : [['Authorization', auth] as [string, string]]),
          ...(type === null ? [] : [['Content-Type', type] as [string, string]]),
          ...rest,
        ]),
      body,
      length: fc.constant<'exact' | 'none'>('exact'),
    }),
  },
)

describe('the fast lane and the framework answer every request alike (generated)', () => {
  let lane: Service
  let framework: Service
  const take = FastLane.prototype.take
  let taken = 0

  beforeAll(async () => {
    lane = await service()
    framework = await service()
    vi.spyOn(FastLane.prototype, 'take').mockImplementation(function (
      this: FastLane,
      req: IncomingMessage,
      res: ServerResponse,
    ) {
      if (req.socket.localPort === framework.port) return false
      const answered = take.call(this, req, res)
      if (answered) taken++
      return answered
    })
    // Let the short-lived token expire while it is still cached.
    await new Promise((resolve) => setTimeout(resolve, 60))
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    for (const s of [lane, framework]) {
      await s.app.close()
      await s.store.close()
    }
  })

  async function both(g: Generated): Promise<void> {
    // A plain read follows on the same connection: the first answer leaves the connection alike too.
    const follow = (s: Service) =>
      Buffer.from(`GET /plants/7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.tokens.rw}\r\n\r\n`)
    const methods = [g.method, 'GET']
    const a = await exchange(lane.port, Buffer.concat([render(g, lane), follow(lane)]), methods)
    const b = await exchange(
      framework.port,
      Buffer.concat([render(g, framework), follow(framework)]),
      methods,
    )
    expect(a, `${g.method} ${g.path} ${JSON.stringify(g.headers)} ${g.body.subarray(0, 200)}`).toEqual(b)
  }

  it('for any method, path, headers and body', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (g) => both(g)),
      { numRuns: 300, seed: 20240611, endOnFailure: true },
    )
    // The comparison means something only if the lane answered a good share of them.
    expect(taken).toBeGreaterThan(30)
    // Counted alike too: requests by route and status, and token verifications.
    const counted = async (s: Service) =>
      (await s.metrics.registry.metrics())
        .split('\n')
        .filter((l) => /^plantstore_(http_requests_total|token_verifications_total)\{/.test(l))
        .sort()
    expect(await counted(lane)).toEqual(await counted(framework))
    // And logged alike (a failure's line), but for the time and the request ids.
    const logs = (s: Service) =>
      s.logged.map((l) =>
        l
          .replace(/"time":\d+/, '')
          .replace(/127\.0\.0\.1:\d+/, '')
          .replace(/"(reqId|pid|hostname)":("[^"]*"|\d+)/g, ''),
      )
    expect(logs(lane)).toEqual(logs(framework))
  }, 60_000)
})
