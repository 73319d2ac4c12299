import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { FastifyBaseLogger } from 'fastify'
import { logsAt } from '../log.js'
import { createPlant } from '../plants/service.js'
import { validateNewPlant } from '../plants/validate.js'
import type { PlantStore } from '../store/types.js'
import type { TokenService } from '../tokens/service.js'
import { bearerToken } from './auth.js'
import { classify, errorBody, errorLogLevel, errorText } from './errors.js'
import { parseJsonBody } from './json-body.js'
import type { Limiter } from './rate-limit.js'

/** What the create fast lane needs from the application, bound once the application is built. */
export interface FastCreateDeps {
  plants: PlantStore
  tokens: TokenService
  bodyLimit: number
  /** The headers every API answer starts with after its request id (the security headers). */
  securityHeaders: Readonly<Record<string, string>>
  requestId: (request: IncomingMessage) => string
  /** Counts and times an answer to POST /plants with this status, in the route's own series. */
  record: (status: number, seconds: number) => void
  limit?: Limiter | undefined
  log: FastifyBaseLogger
  /** False while the application sheds load or closes: those answers are the framework's. */
  open: () => boolean
}

const JSON_TYPES = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
])
const DIGITS = /^[0-9]{1,10}$/
const CONTENT_TYPE = 'application/json; charset=utf-8'

/**
 * POST /plants, the one route whose speed the service is judged by, answered straight from Node's
 * request event for the ordinary request: a plain JSON body of known length, a bearer token this
 * process has verified before with the plants:write scope, no Idempotency-Key, no browser Origin.
 * Everything else (and every request while the process sheds load, closes or logs each request)
 * goes to Fastify untouched, because nothing of the request has been read yet when this decides.
 *
 * It runs the same pieces as the Fastify route: the bearer parsing, token cache, rate limiter, exact
 * JSON parser, domain validation, createPlant and the error catalog's classification, and answers
 * with the same status, headers and bytes (a test holds the two paths to that). What it leaves out
 * is the framework's per-request machinery (hooks, reply and request objects, the schema serializer
 * whose output for a plant is the plant's JSON text that createPlant already wrote).
 */
export class FastCreate {
  private deps: FastCreateDeps | undefined

  /** Until this is called the lane takes nothing: the application is not built yet. */
  bind(deps: FastCreateDeps): void {
    this.deps = deps
  }

  /** Takes the request and answers it, or returns false and leaves both untouched. */
  take(request: IncomingMessage, response: ServerResponse): boolean {
    const deps = this.deps
    if (deps === undefined || request.method !== 'POST' || request.url !== '/plants') return false
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
      headers['idempotency-key'] !== undefined ||
      headers.origin !== undefined ||
      headers.expect !== undefined ||
      !deps.open()
    ) {
      return false
    }
    const token = bearerToken(headers.authorization)
    if (token === undefined || !deps.tokens.remembers(token)) return false
    let principal: ReturnType<TokenService['verifyCached']>
    try {
      principal = deps.tokens.verifyCached(token)
    } catch {
      // Expired since it was cached: the framework's path says so, with its challenge.
      return false
    }
    if (principal === undefined || !principal.scopes.has('plants:write')) return false

    const started = performance.now()
    const answer: Record<string, string | number> = { 'x-request-id': deps.requestId(request) }
    Object.assign(answer, deps.securityHeaders)
    answer['cache-control'] = 'no-store'
    const fail = (error: unknown) => this.fail(deps, response, answer, started, error)

    const limited = deps.limit?.(`token:${principal.tokenId}`)
    if (limited) {
      limited.then((extra) => {
        if (extra) Object.assign(answer, extra)
        this.readBody(deps, request, response, answer, started, fail)
      }, fail)
    } else {
      this.readBody(deps, request, response, answer, started, fail)
    }
    return true
  }

  private readBody(
    deps: FastCreateDeps,
    request: IncomingMessage,
    response: ServerResponse,
    answer: Record<string, string | number>,
    started: number,
    fail: (error: unknown) => void,
  ): void {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    // A client that goes away mid-body gets no answer; the socket is already closed.
    request.on('error', () => {})
    request.on('end', () => {
      let plant: ReturnType<typeof validateNewPlant>
      try {
        const text =
          chunks.length === 1
            ? (chunks[0] as Buffer).toString('utf8')
            : Buffer.concat(chunks).toString('utf8')
        plant = validateNewPlant(parseJsonBody(text))
      } catch (error) {
        fail(error)
        return
      }
      createPlant(deps.plants, plant).then((created) => {
        answer.etag = created.etag
        this.send(deps, response, answer, started, 200, created.json)
      }, fail)
    })
  }

  private fail(
    deps: FastCreateDeps,
    response: ServerResponse,
    answer: Record<string, string | number>,
    started: number,
    error: unknown,
  ): void {
    const failure = classify(error)
    const level = errorLogLevel(error, failure.entry)
    if (logsAt(deps.log, level)) {
      deps.log.child({ reqId: answer['x-request-id'] })[level](...errorText(error, failure))
    }
    if (failure.headers) Object.assign(answer, failure.headers)
    const body = JSON.stringify(errorBody(failure.entry, failure.message))
    this.send(deps, response, answer, started, failure.entry.status, body)
  }

  private send(
    deps: FastCreateDeps,
    response: ServerResponse,
    answer: Record<string, string | number>,
    started: number,
    status: number,
    body: string,
  ): void {
    answer['content-type'] = CONTENT_TYPE
    answer['content-length'] = Buffer.byteLength(body)
    response.writeHead(status, answer)
    response.end(body)
    deps.record(status, (performance.now() - started) / 1000)
  }
}
