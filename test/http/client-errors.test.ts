import { once } from 'node:events'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { errorOf, listenLocally, makeApp, type TestApp } from '../helpers/app.js'
import { openSocket, parseResponses, rawExchange, readUntilClose } from '../helpers/raw-http.js'
import { sqliteKind } from '../helpers/stores.js'

// What Node's HTTP parser refuses before any route (test/process/hostile-sockets.test.ts sends the same to the
// real process): the app listening in this process, so that the handlers' own lines are measured too.
describe('requests refused before routing, in process', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
    port = await listenLocally(t.app)
  })
  afterAll(() => t.close())

  it.each([
    ['an HTTP/1.1 request without Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400, errors.BAD_REQUEST],
    ['a request line it cannot parse', 'GET\r\n\r\n', 400, errors.BAD_REQUEST],
    [
      'a URL past the header limit',
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      414,
      errors.URI_TOO_LONG,
    ],
    [
      'headers past the limit',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
      431,
      errors.HEADERS_TOO_LARGE,
    ],
    [
      'an expectation other than 100-continue',
      'POST /plants HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}',
      417,
      errors.EXPECTATION_FAILED,
    ],
    [
      'a transfer coding other than chunked',
      'POST /plants HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
      400,
      errors.BAD_REQUEST,
    ],
    [
      'a CONNECT, which only a proxy serves',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      400,
      errors.BAD_REQUEST,
    ],
    ['two Host headers', 'GET /healthz HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n', 400, errors.BAD_REQUEST],
    [
      'two Authorization headers',
      'GET /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAUTHORIZATION: Bearer b\r\n\r\n',
      400,
      errors.BAD_REQUEST,
    ],
    [
      'two Content-Type headers',
      'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\nContent-Length: 2\r\n\r\n{}',
      400,
      errors.BAD_REQUEST,
    ],
  ])('answers %s in the Error shape and closes', async (_what, bytes, status, entry) => {
    const { received, closed } = await rawExchange(port, [bytes])
    expect(closed).toBe(true)
    const [response] = parseResponses(received)
    expect(response?.status).toBe(status)
    expect(errorOf({ body: response?.body ?? '', headers: response?.headers ?? {} }).error).toBe(entry.code)
    // Like every answer: written to the socket or not, it has a request id and the security headers.
    expect(response?.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/)
    expect(response?.headers['x-content-type-options']).toBe('nosniff')
    expect(response?.headers['content-security-policy']).toContain("frame-ancestors 'none'")
  })

  it('answers Expect: 100-continue with a refusal, not an invitation, when the token is missing', async () => {
    const head =
      'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 25\r\n\r\n'
    // The body is never sent: a client waits for the 100 (or the final answer) first.
    const { received, closed } = await rawExchange(port, [head])
    expect(received).toMatch(/^HTTP\/1\.1 401 /)
    expect(received).not.toContain('100 Continue')
    // The unsent body cannot be skipped on this connection: it is closed.
    expect(received).toMatch(/\r\nconnection: close\r\n/i)
    expect(closed).toBe(true)
  })

  it('invites the body of an authorized Expect: 100-continue, answers it, and keeps the connection', async () => {
    const token = await t.token()
    const head = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 28\r\n\r\n`
    const next = `GET /plants/9100 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`
    const { received } = await rawExchange(port, [head, '{"id": 9100, "name": "sent"}', next], {
      gapMs: 100,
      deadlineMs: 1500,
    })
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
    const answers = parseResponses(received.slice(received.indexOf('\r\n\r\n') + 4))
    expect(answers.map((a) => a.status)).toEqual([200, 200])
    expect(JSON.parse(answers[1]?.body ?? '')).toEqual({ id: 9100, name: 'sent' })
  })

  it('keeps serving after them', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`)
    expect(res.status).toBe(200)
  })
})

describe('414 or 431: which part of the request was too long', () => {
  async function refusal(maxHeaderSize: number | undefined, bytes: string) {
    const t = await makeApp(sqliteKind, maxHeaderSize === undefined ? {} : { maxHeaderSize })
    try {
      const port = await listenLocally(t.app)
      const { received } = await rawExchange(port, [bytes])
      const [response] = parseResponses(received)
      return {
        status: response?.status,
        error: errorOf({ body: response?.body ?? '', headers: response?.headers ?? {} }).error,
      }
    } finally {
      await t.close()
    }
  }

  it('is 414 for a URL longer than a --max-header-size below 8kb', async () => {
    expect(await refusal(2048, `GET /${'a'.repeat(3000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).toEqual({
      status: 414,
      error: errors.URI_TOO_LONG.code,
    })
  })

  it('is 431 when a URL within the limit and the headers together pass it', async () => {
    const bytes = `GET /${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(9000)}\r\n\r\n`
    expect(await refusal(undefined, bytes)).toEqual({ status: 431, error: errors.HEADERS_TOO_LARGE.code })
  })
})

describe('a request on an open connection once the app is closing, in process', () => {
  it('is answered 503 in the Error shape with Retry-After, after the one in flight', async () => {
    const t = await makeApp(sqliteKind)
    const port = await listenLocally(t.app)
    const auth = `Authorization: Bearer ${await t.token()}`
    const socket = await openSocket(port)
    const answers = readUntilClose(socket, 10_000)
    // A create in flight (its body half sent) holds the connection open through the close. The close
    // waits for the server to have read its headers: before that it is only an idle connection.
    const inFlight = once(t.app.server, 'request')
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n{"id": 8,`,
    )
    await inFlight
    const closed = t.close()
    await new Promise((resolve) => setTimeout(resolve, 200))
    socket.write(` "name": "late"}GET /plants/8 HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`)
    const responses = parseResponses(await answers)
    await closed
    expect(responses.map((r) => r.status)).toEqual([200, 503])
    const refused = responses[1] as (typeof responses)[number]
    expect(errorOf(refused).error).toBe(errors.UNAVAILABLE.code)
    expect(refused.headers['retry-after']).toBe('1')
  })
})

describe('two pipelined requests taken before the app closes, answered once it is closing', () => {
  it.each([
    ['a read', ''],
    ['an expectation refused (417)', 'Expect: 200-ok\r\n'],
  ])('closes the connection after the second answer, %s, which says so', async (_, expect2) => {
    const t = await makeApp(sqliteKind)
    const port = await listenLocally(t.app)
    const auth = `Authorization: Bearer ${await t.token()}`
    // Both reads wait until the close has begun, so that both answers are written while closing.
    const plants = t.store.plants
    const read = plants.read.bind(plants)
    let waiting = 0
    let release = () => {}
    const closingBegun = new Promise<void>((resolve) => {
      release = resolve
    })
    plants.read = async (id) => {
      waiting++
      await closingBegun
      return read(id)
    }
    const socket = await openSocket(port)
    const answers = readUntilClose(socket, 10_000)
    const get = (id: number, extra = '') => `GET /plants/${id} HTTP/1.1\r\nHost: x\r\n${auth}\r\n${extra}\r\n`
    socket.write(get(1) + get(2, expect2))
    // An expectation is refused at once, without reading the plant: the first read is what waits.
    while (waiting < (expect2 === '' ? 2 : 1)) await new Promise((resolve) => setTimeout(resolve, 10))
    const started = Date.now()
    const closed = t.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    release()
    const responses = parseResponses(await answers)
    await closed
    expect(responses.map((r) => r.status)).toEqual([404, expect2 === '' ? 404 : 417])
    // The second answer was queued behind the first when written; kept alive, its connection would
    // hold the close up until --keep-alive-timeout.
    expect(responses[1]?.headers.connection).toBe('close')
    expect(Date.now() - started).toBeLessThan(5000)
  })
})

describe('a request pipelined behind an answer that closes the connection', () => {
  let t: TestApp
  let port: number
  let auth: string
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
    port = await listenLocally(t.app)
    auth = `Authorization: Bearer ${await t.token()}`
  })
  afterAll(() => t.close())

  const create = (body: string, method = 'POST', path = '/plants') =>
    `${method} ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  const exchange = async (bytes: string) => {
    const socket = await openSocket(port)
    const answers = readUntilClose(socket, 5000)
    socket.write(bytes)
    return parseResponses(await answers)
  }
  const stored = async (id: number) =>
    (await t.app.inject({ url: `/plants/${id}`, headers: { authorization: auth.slice(15) } })).statusCode

  // Malformed JSON is answered with Connection: close; what was sent behind it is never answered,
  // so it must not be done either: its client, told nothing, would send it again.
  it.each([
    ['a create', 8101, (id: number) => create(`{"id":${id},"name":"behind"}`)],
    ['a change', 8102, (id: number) => create(`{"name":"changed"}`, 'PUT', `/plants/${id}`)],
    ['a delete', 8103, (id: number) => `DELETE /plants/${id} HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`],
  ])('is not carried out: %s', async (_, id, behind) => {
    if (id !== 8101) {
      expect(
        await t.app.inject({
          method: 'POST',
          url: '/plants',
          headers: { authorization: auth.slice(15) },
          payload: { id, name: 'before' },
        }),
      ).toHaveProperty('statusCode', 200)
    }
    const responses = await exchange(create('{"id": 1') + behind(id))
    expect(responses.map((r) => r.status)).toEqual([400])
    expect(responses[0]?.headers.connection).toBe('close')
    const plant = await t.app.inject({ url: `/plants/${id}`, headers: { authorization: auth.slice(15) } })
    if (id === 8101) expect(plant.statusCode).toBe(404)
    else expect(JSON.parse(plant.body).name).toBe('before')
  })

  it('is carried out, in order, behind an answer that keeps the connection', async () => {
    const responses = await exchange(
      `${create('{"id":8111,"name":"first"}')}${create('{"id":8112,"name":"second"}')}` +
        `GET /plants/8112 HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: close\r\n\r\n`,
    )
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200])
    expect(await stored(8111)).toBe(200)
  })
})

describe('a client that pipelines requests without reading the answers', () => {
  let t: TestApp
  let port: number
  let auth: string
  beforeAll(async () => {
    t = await makeApp(sqliteKind, { rateLimit: null })
    port = await listenLocally(t.app)
    auth = `Authorization: Bearer ${await t.token()}`
  })
  afterAll(() => t.close())

  it('has only what one read brings in parsed while an answer is pending, and gets every answer in order', async () => {
    // The first delete waits for the gate: every request behind it is held until its answer is sent.
    let open = () => {}
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const remove = t.store.plants.remove.bind(t.store.plants)
    let entered = false
    t.store.plants.remove = async (...args) => {
      if (!entered) {
        entered = true
        await gate
      }
      return remove(...args)
    }
    let parsed = 0
    const count = () => {
      parsed++
    }
    t.app.server.on('request', count)
    const socket = await openSocket(port)
    try {
      const del = (id: number) => `DELETE /plants/${id} HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`
      socket.write(del(0))
      await vi.waitFor(() => expect(entered).toBe(true))
      // Several reads' worth (a read takes in up to 64 KiB, a few hundred of these requests).
      const behind = 3000
      socket.write(Array.from({ length: behind }, (_, i) => del(i + 1)).join(''))
      // The count settles where the server stops reading.
      let settled = -1
      await vi.waitFor(
        () => {
          const seen = parsed
          const same = seen === settled
          settled = seen
          expect(same).toBe(true)
        },
        { timeout: 10_000, interval: 300 },
      )
      // Held unread, each one parsed would cost memory until the answer ahead of it is sent.
      expect(parsed).toBeLessThan(behind / 2)
      const answers = readUntilClose(socket, 40_000)
      open()
      // Told to close, the last one ends the exchange.
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      const responses = parseResponses(await answers)
      expect(responses).toHaveLength(behind + 2)
      expect(responses.slice(0, -1).map((r) => JSON.parse(r.body).message)).toEqual(
        Array.from({ length: behind + 1 }, (_, i) => `No plant has id ${i}.`),
      )
      expect(responses.at(-1)?.status).toBe(200)
    } finally {
      t.app.server.off('request', count)
      t.store.plants.remove = remove
      socket.destroy()
    }
  }, 60_000)
})
