import type { FastifyInstance } from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { type AppOptions, buildApp } from '../src/app.js'
import type { LogLevel } from '../src/config.js'
import { createLogger, fitLine, LINE_BYTES_MAX, lazyChildLogger } from '../src/log.js'
import { StoreUnavailableError } from '../src/store/errors.js'
import type { Store } from '../src/store/types.js'
import { createJwtVerifier } from '../src/tokens/jwt.js'
import { TokenService } from '../src/tokens/service.js'
import { listenLocally } from './helpers/app.js'
import { AUDIENCE, ISSUER, serveJwks, signingKey, signJwt } from './helpers/jwks.js'
import { captureLines } from './helpers/log.js'
import { rawRequest } from './helpers/raw-http.js'
import { openFresh, sqliteKind } from './helpers/stores.js'

/** An app on a fresh SQLite store, logging at `level` into `lines`; closed after `work`. */
async function withLoggedApp(
  level: LogLevel,
  work: (t: { app: FastifyInstance; store: Store; tokens: TokenService; lines: string[] }) => Promise<void>,
  options: { bodyLimit?: number; jwts?: AppOptions['jwts'] } = {},
): Promise<void> {
  const { lines, stream } = captureLines()
  const { store } = await openFresh(sqliteKind)
  const tokens = new TokenService(store.tokens)
  const app = await buildApp({ store, tokens, logger: createLogger(level, stream), ...options })
  try {
    await work({ app, store, tokens, lines })
  } finally {
    await app.close()
    await store.close()
  }
}

describe('request loggers', () => {
  it('make no pino child for a request that logs nothing at an enabled level', () => {
    const { lines, stream } = captureLines()
    const parent = createLogger('info', stream)
    const child = vi.spyOn(parent, 'child')
    const log = lazyChildLogger(parent, { reqId: 'r-1' }, {})
    log.debug({ a: 1 }, 'not at info')
    log.trace('nor this')
    expect(child).not.toHaveBeenCalled()
    expect(lines).toEqual([])
  })

  it('bind the request id once a line is written, and redact credentials', () => {
    const { lines, stream } = captureLines()
    const parent = createLogger('info', stream)
    const log = lazyChildLogger(parent, { reqId: 'r-2' }, {})
    log.info({ token: 'pst_secret' }, 'hello')
    log.warn('again')
    expect(lines).toHaveLength(2)
    const first = JSON.parse(lines[0] as string)
    expect(first).toMatchObject({ reqId: 'r-2', msg: 'hello', token: '[redacted]' })
    expect(JSON.parse(lines[1] as string)).toMatchObject({ reqId: 'r-2', level: 40 })
    expect(log.level).toBe('info')
  })

  it('answer as a pino logger does: fatal, child, a new level, and silent writing nothing', () => {
    const { lines, stream } = captureLines()
    const parent = createLogger('info', stream)
    const log = lazyChildLogger(parent, { reqId: 'r-3' }, {})
    log.silent('nothing')
    expect(lines).toEqual([])
    log.fatal('down')
    log.child({ part: 'inner' }).error('inner failure')
    log.level = 'debug'
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ reqId: 'r-3', level: 60, msg: 'down' }),
      expect.objectContaining({ reqId: 'r-3', part: 'inner', level: 50, msg: 'inner failure' }),
    ])
    expect(log.level).toBe('debug')
  })
})

describe('a line longer than one pipe write', () => {
  const bytes = (line: string) => Buffer.byteLength(line)

  it('is written with its longest strings cut, whole and still JSON, by the logger', () => {
    const { lines, stream } = captureLines()
    const log = createLogger('info', stream)
    log.info({ url: `/nowhere/${'a'.repeat(12_000)}`, note: 'b'.repeat(3000), short: 'kept' }, 'long')
    const [line] = lines as [string]
    expect(bytes(line)).toBeLessThanOrEqual(LINE_BYTES_MAX)
    const parsed = JSON.parse(line)
    expect(parsed).toMatchObject({ msg: 'long', short: 'kept' })
    expect(parsed.url).toMatch(/^\/nowhere\/a+…$/)
    // Cut only as far as the line needs: the longest string went first, and that was enough.
    expect(parsed.note).toBe('b'.repeat(3000))
  })

  it('cuts strings of several bytes a character, in nested objects too, to fit', () => {
    const line = `${JSON.stringify({ err: { stack: '🌵'.repeat(3000) }, msg: 'é'.repeat(2000) })}\n`
    const fitted = fitLine(line)
    expect(bytes(fitted)).toBeLessThanOrEqual(LINE_BYTES_MAX)
    expect(JSON.parse(fitted).err.stack.endsWith('…')).toBe(true)
  })

  it('cuts a string of several bytes a character only as far as the line needs, never through one', () => {
    // Offsets of 0 and 1 put the cut on either half of a surrogate pair.
    for (const [start, text] of [
      ['', '🌵'.repeat(3000)],
      ['x', '🌵'.repeat(3000)],
      ['', '木'.repeat(3000)],
    ] as const) {
      const fitted = fitLine(`${JSON.stringify({ msg: start + text })}\n`)
      expect(bytes(fitted)).toBeLessThanOrEqual(LINE_BYTES_MAX)
      expect(bytes(fitted)).toBeGreaterThan(LINE_BYTES_MAX - 8)
      // Half a pair is written as an escape a strict JSON reader refuses.
      expect(fitted).not.toMatch(/\\ud[89a-f]/i)
      const msg = JSON.parse(fitted).msg as string
      expect(msg.startsWith(start + text.slice(0, 100))).toBe(true)
    }
  })

  it('is left as it is when it is not JSON, or has no string long enough to cut', () => {
    const notJson = `${'x'.repeat(5000)}\n`
    expect(fitLine(notJson)).toBe(notJson)
    const many = `${JSON.stringify(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, 'short'])))}\n`
    expect(bytes(many)).toBeGreaterThan(LINE_BYTES_MAX)
    expect(fitLine(many)).toBe(many)
  })

  it('is cut to the documented 4,096 bytes, newline included, and no further', () => {
    const fitted = fitLine(`${JSON.stringify({ msg: 'a'.repeat(5000) })}\n`)
    expect(bytes(fitted)).toBe(4096)
  })

  it('is left as it is when its strings are no longer than a cut leaves them', () => {
    // 65 characters, what a cut string keeps with its mark: cutting one again would not shorten it.
    const line = `${JSON.stringify(Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, 'x'.repeat(65)])))}\n`
    expect(bytes(line)).toBeGreaterThan(LINE_BYTES_MAX)
    expect(fitLine(line)).toBe(line)
  })

  it('is left alone when it fits', () => {
    const line = `${JSON.stringify({ msg: 'x'.repeat(4000) })}\n`
    expect(bytes(line)).toBeLessThanOrEqual(LINE_BYTES_MAX)
    expect(fitLine(line)).toBe(line)
  })
})

describe('a token in a request line', () => {
  it('never reaches the log, wherever the client put it: only its public id does', async () => {
    await withLoggedApp('debug', async ({ app, tokens, lines }) => {
      const { token, record } = await tokens.create('t', ['plants:read'])
      const secret = token.slice(`pst_${record.id}_`.length)
      const auth = { authorization: `Bearer ${token}` }
      expect((await app.inject({ url: `/plants?access_token=${token}`, headers: auth })).statusCode).toBe(200)
      expect((await app.inject({ url: `/nowhere/${token}`, headers: auth })).statusCode).toBe(404)
      expect((await app.inject({ url: `/plants?tag=${token}x`, headers: auth })).statusCode).toBe(200)
      expect((await app.inject({ url: `/plants/${token}`, headers: auth })).statusCode).toBe(400)
      const encoded = token.replaceAll('_', '%5F')
      expect((await app.inject({ url: `/nowhere/${encoded}`, headers: auth })).statusCode).toBe(404)
      // ...and with each letter of the prefix in capitals, encoded: a client's caps lock.
      const shouted = `%50%53%54%5F${token.slice(4)}`
      expect((await app.inject({ url: `/nowhere/${shouted}`, headers: auth })).statusCode).toBe(404)
      const text = lines.join('')
      expect(text).toContain('request completed')
      expect(text).not.toContain(secret)
      expect(text).not.toContain(secret.slice(0, 20))
      expect(text).not.toContain(encoded.slice(-30))
      expect(text).toContain(`pst_${record.id}_[redacted]`)
    })
  })
})

describe("a token's bare secret, without its prefix and id", () => {
  it('is neither sent back nor logged at trace level, wherever the client put it', async () => {
    await withLoggedApp('trace', async ({ app, tokens, lines }) => {
      const { token, record } = await tokens.create('t', ['plants:read', 'plants:write'])
      const secret = token.slice(`pst_${record.id}_`.length)
      const auth = `Bearer ${token}`
      const answers = [
        await app.inject({ url: '/plants', headers: { authorization: auth, 'x-request-id': secret } }),
        await app.inject({ url: `/plants?tag=${secret}`, headers: { authorization: auth } }),
        await app.inject({ url: `/plants?after=${secret}`, headers: { authorization: auth } }),
        await app.inject({ url: `/plants?${secret}=1`, headers: { authorization: auth } }),
        await app.inject({ url: `/plants/${secret}`, headers: { authorization: auth } }),
        await app.inject({ url: `/nowhere/${secret}` }),
        await app.inject({
          url: '/plants/1',
          headers: { authorization: auth, 'if-none-match': `"${secret}"` },
        }),
        await app.inject({ url: '/plants', headers: { authorization: auth, accept: secret } }),
        await app.inject({
          url: '/plants',
          headers: { authorization: auth, origin: `https://${secret}.example` },
        }),
        await app.inject({ url: '/plants', headers: { authorization: auth, 'x-custom': secret } }),
        await app.inject({
          method: 'POST',
          url: '/plants',
          headers: { authorization: auth, 'content-type': secret, 'idempotency-key': secret },
          payload: '{"id": 1, "name": "a"}',
        }),
        await app.inject({ url: '/plants', headers: { authorization: `Bearer ${secret}` } }),
      ]
      for (const answer of answers) {
        expect(JSON.stringify(answer.headers)).not.toContain(secret)
        expect(answer.body).not.toContain(secret)
      }
      const text = lines.join('')
      expect(text).toContain('request completed')
      expect(text).not.toContain(secret)
      expect(text).not.toContain(secret.slice(0, 30))
    })
  })
})

describe('a JWT', () => {
  it('never reaches the log at trace level, sent in the Authorization header, the query or the path', async () => {
    const key = await signingKey('RS256', 'k1')
    const jwks = await serveJwks([key])
    const down = await serveJwks([])
    down.down = true
    const settings = { issuer: ISSUER, audience: AUDIENCE, scopeClaim: 'scope', clockToleranceMs: 0 }
    try {
      const good = await signJwt(key, { scope: 'plants:read plants:write' })
      const refused = await signJwt(key, { aud: 'another-api' })
      const sent = [good, refused]
      const requests = (app: FastifyInstance) =>
        Promise.all(
          sent.flatMap((jwt) => [
            app.inject({ url: '/plants', headers: { authorization: `Bearer ${jwt}` } }),
            app.inject({
              url: `/plants?access_token=${jwt}&tag=${jwt}`,
              headers: { authorization: `Bearer ${jwt}` },
            }),
            app.inject({ url: `/plants/${jwt}`, headers: { authorization: `Bearer ${jwt}` } }),
            app.inject({ url: `/nowhere/${jwt}`, headers: { authorization: `Bearer ${jwt}` } }),
            app.inject({ url: `/nowhere/${jwt.replaceAll('.', '%2E')}` }),
            app.inject({
              method: 'POST',
              url: `/plants?q=${jwt}`,
              headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json', 'x-token': jwt },
              payload: `{"id": 1, "name": "${jwt}"}`,
            }),
          ]),
        )
      // Accepted and refused, by a service that takes JWTs, by one whose provider is down, and by
      // one that takes none.
      for (const jwts of [
        createJwtVerifier({ ...settings, jwksUrl: jwks.url }),
        createJwtVerifier({ ...settings, jwksUrl: down.url }),
        undefined,
      ]) {
        await withLoggedApp(
          'trace',
          async ({ app, lines }) => {
            const answers = await requests(app)
            const statuses = answers.map((answer) => answer.statusCode)
            for (const answer of answers) {
              for (const jwt of sent) {
                expect(JSON.stringify(answer.headers)).not.toContain(jwt.split('.')[2])
                expect(answer.body).not.toContain(jwt.split('.')[2])
              }
            }
            const text = lines.join('')
            expect(text).toContain('request completed')
            for (const jwt of sent) {
              for (const part of jwt.split('.')) expect(text).not.toContain(part.slice(0, 24))
            }
            if (jwts === undefined) expect(statuses).not.toContain(200)
            else if (statuses.includes(503)) expect(text).toContain('identity provider keys unreachable')
            else expect(statuses).toContain(200)
          },
          { jwts },
        )
      }
    } finally {
      await jwks.close()
      await down.close()
    }
  })
})

describe("a credential in a URL that is not shaped as this service's token", () => {
  it('never reaches the log either', async () => {
    await withLoggedApp('debug', async ({ app, tokens, lines }) => {
      const { token, record } = await tokens.create('t', ['plants:read'])
      const secret = token.slice(`pst_${record.id}_`.length)
      const auth = { authorization: `Bearer ${token}` }
      // Another service's bearer token where RFC 6750 puts one, and keys named for what they hold.
      const foreign = 'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.Zm9yZWlnbi1zaWduYXR1cmU'
      const url = `/plants?access_token=${foreign}&tag=fern&client_secret=hunter2hunter2&X-Api-Key=k3yk3yk3y&password=pa55w0rdA&pwd=pwdV4lue&db_credential=cr3dV4l&auth=4uthB&x-auth=x4uthC&author=bob&oauth_state=st8&limit=5`
      expect((await app.inject({ url, headers: auth })).statusCode).toBe(200)
      // This service's token with its prefix percent-encoded.
      const encoded = `%70%73%74%5F${token.slice(4)}`
      expect((await app.inject({ url: `/nowhere/${encoded}`, headers: auth })).statusCode).toBe(404)
      const text = lines.join('')
      expect(text).toContain(
        'access_token=[redacted]&tag=fern&client_secret=[redacted]&X-Api-Key=[redacted]&password=[redacted]&pwd=[redacted]&db_credential=[redacted]&auth=[redacted]&x-auth=[redacted]&author=bob&oauth_state=st8&limit=5',
      )
      for (const leaked of [
        foreign,
        'hunter2',
        'k3yk3yk3y',
        'pa55w0rd',
        'pwdV4lue',
        'cr3dV4l',
        '4uthB',
        'x4uthC',
        secret,
        secret.slice(0, 20),
      ]) {
        expect(text).not.toContain(leaked)
      }
      expect(text).toContain(`pst_${record.id}_[redacted]`)
    })
  })
})

describe('a credential in a URL written unusually', () => {
  it('never reaches the log: an encoded name, a bracketed name, a quote or backslash in the value', async () => {
    await withLoggedApp('debug', async ({ app, tokens, lines }) => {
      const { token } = await tokens.create('t', ['plants:read'])
      // The server decodes `access%5Ftoken` to `access_token`; the log shows the URL as sent, and
      // escapes a quote or backslash in it.
      const urls = [
        '/plants?access%5Ftoken=leakedA1',
        '/plants?%61ccess_token=leakedB2',
        '/plants?access_token[]=leakedC3',
        '/plants?access_token=x"leakedD4',
        '/plants?client_secret=x\\leakedE5',
      ]
      // Sent raw: an HTTP client would percent-encode the quote.
      const port = await listenLocally(app)
      for (const url of urls) {
        const request = `GET ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
        expect(await rawRequest(port, request)).toMatch(/^HTTP\/1\.1 200 /)
      }
      // A name whose escapes do not decode is refused, and logged as written, credential-named.
      const malformed = `GET /plants?access_token%E0%A4%A=leakedF6 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`
      expect(await rawRequest(port, malformed)).toMatch(/^HTTP\/1\.1 400 /)
      const text = lines.join('')
      expect(text).toContain('access_token%E0%A4%A=[redacted]')
      expect(text).toContain('access%5Ftoken=[redacted]')
      for (const leaked of ['leakedA1', 'leakedB2', 'leakedC3', 'leakedD4', 'leakedE5', 'leakedF6']) {
        expect(text).not.toContain(leaked)
      }
    })
  })

  it('never reaches the log when a # the server reads as part of the query sits in its name or value', async () => {
    await withLoggedApp('debug', async ({ app, tokens, lines }) => {
      const { token } = await tokens.create('t', ['plants:read'])
      app.get('/query-as-read', async (request) => request.query)
      const port = await listenLocally(app)
      const send = (url: string, auth = '') =>
        rawRequest(port, `GET ${url} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`)
      // How the server reads such a query: the # and what follows belong to the name or value.
      const read = await send('/query-as-read?password=x#leakedF6&x#access_token=leakedG7')
      expect(JSON.parse(read.slice(read.indexOf('\r\n\r\n') + 4))).toEqual({
        password: 'x#leakedF6',
        'x#access_token': 'leakedG7',
      })
      for (const url of ['/plants?password=x#leakedH8', '/plants?tag=a&x#client_secret=leakedI9']) {
        expect(await send(url, `Authorization: Bearer ${token}\r\n`)).toMatch(/^HTTP\/1\.1 200 /)
      }
      const text = lines.join('')
      expect(text).toContain('request completed')
      for (const leaked of ['leakedF6', 'leakedG7', 'leakedH8', 'leakedI9'])
        expect(text).not.toContain(leaked)
    })
  })

  it('leaves ordinary values alone, whatever words they hold', async () => {
    await withLoggedApp('debug', async ({ app, tokens, lines }) => {
      const { token } = await tokens.create('t', ['plants:read'])
      const url = '/plants?tag=tokenomics&name=secret-garden'
      expect((await app.inject({ url, headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200)
      expect(lines.join('')).toContain(url)
    })
  })
})

describe('the line of a request whose connection is cut', () => {
  it('names its client address, as every request line does', async () => {
    await withLoggedApp(
      'debug',
      async ({ app, tokens, lines }) => {
        const { token } = await tokens.create('t', ['plants:read', 'plants:write'])
        const port = await listenLocally(app)
        // A DELETE reads no body: one past the body limit is skipped up to it, then the connection is cut.
        const body = 'x'.repeat(1000)
        const answer = await rawRequest(
          port,
          `DELETE /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        )
        expect(answer).toMatch(/^HTTP\/1\.1 404 /)
        await vi.waitFor(() => expect(lines.join('')).toContain('request completed'))
        const completed = lines
          .map((line) => JSON.parse(line))
          .find((line) => line.msg === 'request completed')
        expect(completed).toMatchObject({ method: 'DELETE', status: 404, ip: '127.0.0.1' })
      },
      { bodyLimit: 100 },
    )
  })
})

describe('readiness probes during a database outage', () => {
  it("share the requests' one line per window instead of writing a warning each", async () => {
    await withLoggedApp('info', async ({ app, store, lines }) => {
      Object.assign(store, {
        ping: () => Promise.reject(new StoreUnavailableError('database unreachable: connect ECONNREFUSED')),
      })
      for (let i = 0; i < 20; i++) expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503)
      const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string })
      expect(warnings.filter((line) => line.level >= 40)).toEqual([
        expect.objectContaining({ level: 40, msg: 'database unreachable' }),
      ])
    })
  })
})
