import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FastifyBaseLogger } from 'fastify'
import { parseInt64 } from '../plants/int64.js'
import { utf8Text } from '../plants/json.js'
import { createPlant, listPlantsJson, readPlant } from '../plants/service.js'
import { type PlantListQuery, validateListQuery, validateNewPlant } from '../plants/validate.js'
import type { PlantStore } from '../store/types.js'
import type { Scope } from '../tokens/scopes.js'
import type { Principal, TokenService } from '../tokens/service.js'
import { bearerToken } from './auth.js'
import { classify, errorBody } from './errors.js'
import type { FailureLog } from './failure-log.js'
import { parseJsonBody } from './json-body.js'
import { nextPageLink } from './next-link.js'
import type { Limiter } from './rate-limit.js'

/** What the fast lane needs from the application, bound once the application is built. */
export interface FastLaneDeps {
  plants: PlantStore
  tokens: TokenService
  bodyLimit: number
  /** The headers every API answer starts with after its request id (security headers, and CORS's when on). */
  securityHeaders: Readonly<Record<string, string>>
  /** The Vary of an answer of a route the framework compresses (a page of plants), in whichever variant. */
  compressibleVary: string
  requestId: (request: IncomingMessage) => string
  /** Counts and times an answer in its route's own series (the route as Fastify names it). */
  record: (method: string, route: string, status: number, seconds: number) => void
  limit?: Limiter | undefined
  log: FastifyBaseLogger
  failures: FailureLog
  /** False while the application sheds load or closes: those answers are the framework's. */
  open: () => boolean
}

/** One answer under way: its headers so far, the route it is counted under, and when it began. */
interface Answer {
  headers: Record<string, string | number>
  method: string
  route: string
  started: number
}

const JSON_TYPES = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
])
const CONTENT_TYPE = 'application/json; charset=utf-8'
const DIGITS = /^[0-9]{1,10}$/
const INT64_TEXT = /^-?[0-9]{1,19}$/
const QUERY_PAIR = /^(limit|after|tag)=([A-Za-z0-9._~-]+)$/

/**
 * The pairs of a query string in which every pair is a known name, given once, with a value that
 * needs no decoding; undefined for anything else, which the framework's query parser then reads.
 */
function plainQuery(search: string): Record<string, string> | undefined {
  const raw: Record<string, string> = {}
  if (search === '') return raw
  for (const pair of search.split('&')) {
    const match = QUERY_PAIR.exec(pair)
    if (match === null) return undefined
    const [, name, value] = match as unknown as [string, string, string]
    if (Object.hasOwn(raw, name)) return undefined
    raw[name] = value
  }
  return raw
}

/**
 * The lane answers the plant routes that carry the load, POST /plants (the one whose speed the
 * service is judged by), GET /plants/{id} and GET /plants, straight from Node's request event for
 * the ordinary request: a bearer token this process has verified before with the route's scope, no
 * browser Origin, and for a create a plain JSON body of known length without an Idempotency-Key (see
 * takeRead for the reads). Everything else (and every request while the process sheds load, closes
 * or logs each request) goes to Fastify untouched, because nothing of the request has been read yet
 * when this decides.
 *
 * It runs the same pieces as the Fastify routes: the bearer parsing, token cache, rate limiter, exact
 * JSON parser, domain validation, the plant service and the error catalog's classification, and
 * answers with the same status, headers and bytes (a test holds the two paths to that). What it
 * leaves out is the framework's per-request machinery (hooks, reply and request objects, the schema
 * serializer whose output for a plant is the plant's JSON text the service already wrote).
 */
export class FastLane {
  private deps: FastLaneDeps | undefined

  /** Until this is called the lane takes nothing: the application is not built yet. */
  bind(deps: FastLaneDeps): void {
    this.deps = deps
  }

  /** Takes the request and answers it, or returns false and leaves both untouched. */
  take(request: IncomingMessage, response: ServerResponse): boolean {
    const deps = this.deps
    if (deps === undefined) return false
    if (request.method === 'GET') return this.takeRead(deps, request, response)
    if (request.method !== 'POST' || request.url !== '/plants') return false
    const headers = request.headers
    const length = headers['content-length']
    const type = headers['content-type']
    const bytes = length !== undefined && DIGITS.test(length) ? Number(length) : 0
    if (
      bytes === 0 ||
      bytes > deps.bodyLimit ||
      type === undefined ||
      !JSON_TYPES.has(type.toLowerCase()) ||
      headers['transfer-encoding'] !== undefined ||
      headers['content-encoding'] !== undefined ||
      headers['idempotency-key'] !== undefined ||
      // Whether to send 100 Continue is decided where the body is read (app.ts, awaitContinue).
      headers.expect !== undefined
    ) {
      return false
    }
    const principal = this.admit(deps, headers, 'plants:write')
    if (principal === undefined) return false
    const answer = this.begin(deps, request, 'POST', '/plants')
    this.limited(deps, principal, response, answer, () => this.create(deps, request, response, answer))
    return true
  }

  /**
   * GET /plants/{id} without a condition, and GET /plants with a plain query (limit, after and tag
   * at most once each, in characters that need no decoding) when the client asks for no compression
   * (a page of a kilobyte or more is the framework's to compress). An id or a query the framework
   * would refuse stays with it, for its 400.
   */
  private takeRead(deps: FastLaneDeps, request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? ''
    const headers = request.headers
    if (url.startsWith('/plants/')) {
      if (headers['if-none-match'] !== undefined || headers['if-match'] !== undefined) return false
      const digits = url.slice(8)
      const id = INT64_TEXT.test(digits) ? parseInt64(digits) : null
      if (id === null) return false
      return this.answerRead(deps, request, response, '/plants/:id', async (answer) => {
        const found = await readPlant(deps.plants, id)
        answer.headers.etag = found.etag
        return found.json
      })
    }
    if (url !== '/plants' && !url.startsWith('/plants?')) return false
    if (headers['accept-encoding'] !== undefined) return false
    const raw = plainQuery(url.slice(8))
    if (raw === undefined) return false
    let query: PlantListQuery
    try {
      query = validateListQuery(raw)
    } catch {
      return false
    }
    return this.answerRead(deps, request, response, '/plants', async (answer) => {
      const page = await listPlantsJson(deps.plants, query)
      if (page.next !== undefined) answer.headers.link = nextPageLink(query, page.next)
      return page.json
    })
  }

  /** Answers a read with the body `read` resolves to (200), or with the error it rejects with. */
  private answerRead(
    deps: FastLaneDeps,
    request: IncomingMessage,
    response: ServerResponse,
    route: string,
    read: (answer: Answer) => Promise<string>,
  ): boolean {
    const principal = this.admit(deps, request.headers, 'plants:read')
    if (principal === undefined) return false
    const answer = this.begin(deps, request, 'GET', route)
    this.limited(deps, principal, response, answer, () =>
      read(answer).then(
        (body) => this.send(deps, response, answer, 200, body),
        (error: unknown) => this.fail(deps, response, answer, error),
      ),
    )
    return true
  }

  /**
   * The principal of an ordinary request's token when this process has verified it before and it
   * has the scope; undefined when the framework must answer (its first use, a browser's request, an
   * expired token, a missing scope, a process that sheds load or closes).
   */
  private admit(deps: FastLaneDeps, headers: IncomingHttpHeaders, scope: Scope): Principal | undefined {
    if (headers.origin !== undefined || headers.expect !== undefined || !deps.open()) return undefined
    const token = bearerToken(headers.authorization)
    if (token === undefined) return undefined
    // An expired token goes to the framework too, which says so with its challenge; so does a failed
    // read of the revocations, which would otherwise escape Node's request listener and end the
    // process: the framework meets it again, and answers it.
    try {
      return deps.tokens.verifyCachedFor(token, scope)
    } catch {
      return undefined
    }
  }

  private begin(deps: FastLaneDeps, request: IncomingMessage, method: string, route: string): Answer {
    const started = performance.now()
    const headers: Record<string, string | number> = { 'x-request-id': deps.requestId(request) }
    Object.assign(headers, deps.securityHeaders)
    headers['cache-control'] = 'no-store'
    return { headers, method, route, started }
  }

  /** Counts the request against its token's rate limit, then goes on unless the limit refused it. */
  private limited(
    deps: FastLaneDeps,
    principal: Principal,
    response: ServerResponse,
    answer: Answer,
    next: () => void,
  ): void {
    const limited = deps.limit?.(`token:${principal.tokenId}`)
    if (!limited) {
      next()
      return
    }
    limited.then(
      (extra) => {
        if (extra) Object.assign(answer.headers, extra)
        next()
      },
      (error: unknown) => this.fail(deps, response, answer, error),
    )
  }

  private create(
    deps: FastLaneDeps,
    request: IncomingMessage,
    response: ServerResponse,
    answer: Answer,
  ): void {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    // A client that goes away mid-body gets no answer; the socket is already closed.
    request.on('error', () => {})
    request.on('end', () => {
      let body: unknown
      let plant: ReturnType<typeof validateNewPlant>
      try {
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)
        body = parseJsonBody(utf8Text(bytes))
      } catch (error) {
        // Fastify closes the connection after a body its parser refused; so does the lane, or a
        // client could tell which of the two answered.
        answer.headers.connection = 'close'
        this.fail(deps, response, answer, error)
        return
      }
      try {
        plant = validateNewPlant(body)
      } catch (error) {
        this.fail(deps, response, answer, error)
        return
      }
      createPlant(deps.plants, plant).then(
        (created) => {
          answer.headers.etag = created.etag
          this.send(deps, response, answer, 200, created.json)
        },
        (error: unknown) => this.fail(deps, response, answer, error),
      )
    })
  }

  private fail(deps: FastLaneDeps, response: ServerResponse, answer: Answer, error: unknown): void {
    const failure = classify(error)
    deps.failures.write(deps.log, error, failure, { reqId: answer.headers['x-request-id'] })
    if (failure.headers) Object.assign(answer.headers, failure.headers)
    const body = JSON.stringify(errorBody(failure.entry, failure.message))
    this.send(deps, response, answer, failure.entry.status, body)
  }

  private send(
    deps: FastLaneDeps,
    response: ServerResponse,
    answer: Answer,
    status: number,
    body: string,
  ): void {
    answer.headers['content-type'] = CONTENT_TYPE
    // A single plant is never compressed (routes/plants.ts); a page is, when the client asks. The
    // framework's compression adds its Vary once the answer is serialized, so it goes here, between
    // the content type and the length, for the lane's header block to be the framework's byte for byte.
    if (answer.method === 'GET' && answer.route === '/plants') answer.headers.vary = deps.compressibleVary
    answer.headers['content-length'] = Buffer.byteLength(body)
    // Counted once sent, as the framework counts in onResponse: an answer queued behind one that
    // closes the connection (a pipelined request) never goes out, and is no request answered.
    response.once('finish', () =>
      deps.record(answer.method, answer.route, status, (performance.now() - answer.started) / 1000),
    )
    response.writeHead(status, answer.headers)
    response.end(body)
  }
}
