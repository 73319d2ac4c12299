import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { inject } from 'vitest'
import { answerKey, listedAnswers, listedCodes } from '../setup/contract-gaps.js'
import type { RawResponse } from './raw-http.js'

// Every response a test receives through app.inject is checked against the published document: its
// status must be documented for the operation, and its body must match the documented schema. The
// operations seen, and the error codes each answered with, are recorded: the run fails when a
// documented operation was never exercised, or a code it lists never answered (test/setup/contract-coverage.ts).

declare module 'vitest' {
  export interface ProvidedContext {
    contractRecordDir: string
  }
}

interface Operation {
  operationId: string
  pattern: RegExp
  /** The path has no parameter: the router takes it before any template it also matches. */
  literal: boolean
  method: string
  responses: Record<
    string,
    { description?: string; content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }
  >
}

/**
 * Headers any answer may carry, which the document describes once instead of on every response: the
 * transport's, the request id and security headers, CORS, compression, and the rate limit's
 * RateLimit-* fields (on every authenticated answer while a limit is set).
 */
const GENERAL_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'date',
  'connection',
  'keep-alive',
  'vary',
  'cache-control',
  'x-request-id',
  'x-content-type-options',
  'x-frame-options',
  'referrer-policy',
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'strict-transport-security',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
])

interface OpenApiDocument {
  paths: Record<string, Record<string, Omit<Operation, 'pattern' | 'literal' | 'method'>>>
  components: { schemas: Record<string, unknown> }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head']

export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    for (const [method, operation] of Object.entries(item)) {
      if (METHODS.includes(method))
        operations.push({ ...operation, pattern, literal: !path.includes('{'), method: method.toUpperCase() })
    }
  }
  return operations
}

export class ContractChecker {
  readonly operations: Operation[]
  // date-time and uri are checked as the document states them; int32 and int64 are bounds the
  // schemas already carry.
  private readonly ajv = addFormats.default(
    new Ajv({ strict: false, allErrors: true, formats: { int32: true, int64: true } }),
  )
  private readonly validators = new Map<unknown, ValidateFunction>()
  readonly exercised = new Set<string>()
  /** The error answers seen, as answerKey gives them. */
  readonly answered = new Set<string>()

  constructor(document: OpenApiDocument) {
    this.operations = operationsOf(document)
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      const { $id: _id, ...rest } = schema as Record<string, unknown>
      this.ajv.addSchema(rest, `#/components/schemas/${name}`)
    }
  }

  /** Whether a value matches one of the document's schemas, named by its reference. */
  matches(ref: string, value: unknown): boolean {
    return this.ajv.validate({ $ref: ref }, value)
  }

  /** Throws when the response is not one the document promises. */
  check(
    method: string,
    url: string,
    status: number,
    contentType: string | undefined,
    text: string,
    headerNames: string[] = [],
  ): void {
    const path = new URL(url, 'http://x').pathname
    // The router refuses a path that does not decode (400) before any operation sees it.
    if (!decodes(path)) return
    const wanted = method === 'HEAD' ? 'GET' : method
    // A path of its own (/plants/batch) is routed there, never to a template it also matches (/plants/{id}).
    const onPath = this.operations.filter((o) => o.pattern.test(path))
    const literal = onPath.filter((o) => o.literal)
    const operation = (literal.length > 0 ? literal : onPath).find((o) => o.method === wanted)
    if (!operation) return // undocumented routes: unknown paths (404) and wrong methods (405)
    this.exercised.add(operation.operationId)
    const documented = operation.responses[String(status)] ?? operation.responses.default
    if (!documented) {
      throw new Error(
        `${method} ${path} answered ${status}, which ${operation.operationId} does not document`,
      )
    }
    const listed = new Set(Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase()))
    const unlisted = headerNames
      .map((name) => name.toLowerCase())
      .filter(
        (name) => !GENERAL_HEADERS.has(name) && !name.startsWith('access-control-') && !listed.has(name),
      )
    if (unlisted.length > 0) {
      throw new Error(
        `${operation.operationId} ${status} sent headers it does not document: ${unlisted.join(', ')}`,
      )
    }
    const media = documented.content?.['application/json']
    const otherType = Object.keys(documented.content ?? {}).find(
      (type) => type !== 'application/json' && String(contentType).startsWith(type),
    )
    // A documented non-JSON body (the Prometheus text of /metrics) is checked by its media type only.
    if (!media && otherType) return
    if (!media || method === 'HEAD') {
      if (method !== 'HEAD' && text !== '') {
        throw new Error(`${operation.operationId} ${status} documents no body but sent ${text}`)
      }
      return
    }
    if (!String(contentType).startsWith('application/json')) {
      throw new Error(`${operation.operationId} ${status} sent ${String(contentType)}`)
    }
    let validate = this.validators.get(media.schema)
    if (!validate) {
      validate = this.ajv.compile(media.schema as object)
      this.validators.set(media.schema, validate)
    }
    const body = JSON.parse(text) as { error?: unknown }
    if (!validate(body)) {
      throw new Error(
        `${operation.operationId} ${status} body does not match its schema: ${this.ajv.errorsText(validate.errors)}: ${text}`,
      )
    }
    // An error response lists the codes this operation can give with that status; one that lists
    // none would let any code through.
    if (status < 400) return
    const codes = listedCodes(documented.description)
    if (!codes) {
      throw new Error(`${operation.operationId} ${status} lists no error codes: ${documented.description}`)
    }
    if (!codes.includes(String(body.error))) {
      throw new Error(
        `${operation.operationId} ${status} answered code ${body.error}, which it does not list: ${codes.join(', ')}`,
      )
    }
    this.answered.add(answerKey(operation.operationId, status, String(body.error)))
  }
}

function bodyText(response: LightMyRequestResponse): string {
  const encoding = response.headers['content-encoding']
  if (encoding === 'gzip') return gunzipSync(response.rawPayload).toString()
  if (encoding === 'br') return brotliDecompressSync(response.rawPayload).toString()
  if (encoding === 'deflate') return inflateSync(response.rawPayload).toString()
  return response.body
}

let recordFile: string | undefined

function record(checker: ContractChecker): void {
  const dir = inject('contractRecordDir')
  if (!dir) return
  recordFile ??= join(dir, `${process.pid}-${Math.random().toString(36).slice(2)}.jsonl`)
  appendFileSync(
    recordFile,
    `${JSON.stringify({
      documented: checker.operations.map((o) => o.operationId),
      exercised: [...checker.exercised],
      listed: listedAnswers(checker.operations),
      answered: [...checker.answered],
    })}\n`,
  )
}

export interface ContractWatch {
  /** Records the operations seen; call it when the app closes. */
  done(): void
  /** A fetch whose responses are checked too, for tests that go through real HTTP. */
  fetch(request: Request): Promise<Response>
  /** Checks an answer read off a raw socket, for requests no HTTP client would send. */
  answer(method: string, url: string, response: RawResponse): void
}

/** Checks every response of `app.inject` from now on, and of the fetch it returns. */
export function watchContract(app: FastifyInstance): ContractWatch {
  const checker = new ContractChecker(app.swagger() as unknown as OpenApiDocument)
  const original = app.inject.bind(app) as (
    options: InjectOptions | string,
  ) => Promise<LightMyRequestResponse>
  const checked = async (options: InjectOptions | string) => {
    const response = await original(options)
    const method = typeof options === 'string' ? 'GET' : (options.method ?? 'GET').toUpperCase()
    const url = typeof options === 'string' ? options : String(options.url ?? options.path ?? '/')
    const type = response.headers['content-type']
    checker.check(
      method,
      url,
      response.statusCode,
      type === undefined ? undefined : String(type),
      bodyText(response),
      Object.keys(response.headers),
    )
    return response
  }
  ;(app as unknown as { inject: typeof checked }).inject = checked
  return {
    done: () => record(checker),
    fetch: async (request) => {
      const method = request.method
      const response = await globalThis.fetch(request)
      // fetch has already undone any Content-Encoding.
      const text = await response.clone().text()
      checker.check(
        method,
        request.url,
        response.status,
        response.headers.get('content-type') ?? undefined,
        text,
        [...response.headers.keys()],
      )
      return response
    },
    answer: (method, url, response) =>
      checker.check(
        method,
        url,
        response.status,
        response.headers['content-type'],
        response.body,
        Object.keys(response.headers),
      ),
  }
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}
