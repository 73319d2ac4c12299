import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { isDatabaseUnavailable, StoreUnavailableError } from '../store/errors.js'
import type { FailureLog } from './failure-log.js'
import { PATCH_MEDIA_TYPES } from './schemas.js'

export function errorBody(
  entry: CatalogEntry,
  message: string = entry.message,
): { error: number; message: string } {
  return { error: entry.code, message }
}

// Fastify's own errors, by code, mapped onto the catalog. Anything not here that carries a 4xx status
// still gets the catalog's generic entry for its status; anything else is a 500.
const FASTIFY_ERRORS: Record<string, CatalogEntry> = {
  FST_ERR_BAD_URL: { ...errors.BAD_REQUEST, message: 'The URL holds a percent-escape that does not decode.' },
  FST_ERR_MAX_PARAM_LENGTH: { ...errors.URI_TOO_LONG, message: 'A segment of the URL path is too long.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: errors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: errors.BAD_REQUEST,
  FST_ERR_CTP_BODY_TOO_LARGE: errors.BODY_TOO_LARGE,
  FST_ERR_CTP_EMPTY_JSON_BODY: errors.BODY_MISSING,
  FST_ERR_CTP_INVALID_JSON_BODY: errors.BODY_MALFORMED,
  FST_ERR_CTP_EMPTY_TYPE: errors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_CTP_INVALID_TYPE: errors.UNSUPPORTED_MEDIA_TYPE,
  FST_ERR_ASYNC_CONSTRAINT: errors.BAD_REQUEST,
}

const BY_STATUS: Record<number, CatalogEntry> = {
  400: errors.BAD_REQUEST,
  // The service's own 403s are AppErrors (a missing scope). The only other one is the docs' file
  // server refusing a path that climbs out of its folder: to the client, no such file.
  403: errors.ROUTE_NOT_FOUND,
  404: errors.ROUTE_NOT_FOUND,
  405: errors.METHOD_NOT_ALLOWED,
  408: errors.REQUEST_TIMEOUT,
  // 412 and 416 come from the docs page's file server, which honours If-Match, If-Unmodified-Since
  // and Range on its assets.
  412: {
    ...errors.PRECONDITION_FAILED,
    message: 'The file does not meet the If-Match or If-Unmodified-Since of the request.',
  },
  413: errors.BODY_TOO_LARGE,
  414: errors.URI_TOO_LONG,
  415: errors.UNSUPPORTED_MEDIA_TYPE,
  416: errors.RANGE_NOT_SATISFIABLE,
  429: errors.RATE_LIMITED,
  431: errors.HEADERS_TOO_LARGE,
  503: errors.UNAVAILABLE,
}

/** Seconds a client is told to wait when the database is unreachable. */
export const DATABASE_RETRY_AFTER = '1'

/** Seconds a client is told to wait while the first request with its Idempotency-Key runs. */
const IN_PROGRESS_RETRY_AFTER = '1'

/** What an error thrown anywhere in a request answers with: an entry, a message, extra headers. */
export function classify(error: unknown): {
  entry: CatalogEntry
  message: string
  headers?: Record<string, string>
} {
  if (error instanceof AppError) {
    // The first request with this key will answer shortly: the client is to send it again then.
    const headers =
      error.entry === errors.IDEMPOTENCY_IN_PROGRESS
        ? { 'retry-after': IN_PROGRESS_RETRY_AFTER }
        : error.headers
    return { entry: error.entry, message: error.message, headers }
  }
  if (error instanceof StoreUnavailableError) {
    // A write that got this answer may still have committed: clients retry with the same Idempotency-Key.
    return {
      entry: errors.UNAVAILABLE,
      message: 'The database is unreachable: retry after the time given.',
      headers: { 'retry-after': DATABASE_RETRY_AFTER },
    }
  }
  if (isDatabaseUnavailable(error)) {
    return {
      entry: errors.UNAVAILABLE,
      message: 'The database is unavailable: retry after the time given.',
      headers: { 'retry-after': DATABASE_RETRY_AFTER },
    }
  }
  const fastifyError = error as Partial<FastifyError>
  const known = fastifyError.code ? FASTIFY_ERRORS[fastifyError.code] : undefined
  if (known) return { entry: known, message: known.message }
  if (fastifyError.validation) return { entry: errors.BAD_REQUEST, message: fastifyError.message ?? '' }
  const status = fastifyError.statusCode
  const byStatus = status ? BY_STATUS[status] : undefined
  if (byStatus) {
    // A 416 names the file's length (RFC 9110 §15.5.17): the client can ask for a part that exists.
    const range = (error as { headers?: Record<string, string> }).headers?.['Content-Range']
    const answer = { entry: byStatus, message: byStatus.message }
    return range === undefined ? answer : { ...answer, headers: { 'content-range': range } }
  }
  return { entry: errors.INTERNAL, message: errors.INTERNAL.message }
}

export function sendError(
  reply: FastifyReply,
  entry: CatalogEntry,
  message?: string,
  headers?: Record<string, string>,
): FastifyReply {
  if (headers) reply.headers(headers)
  return reply.code(entry.status).type('application/json; charset=utf-8').send(errorBody(entry, message))
}

/**
 * How loud a failed request is in the log: an outage warns, a bug errs, a client's mistake is debug.
 * A request shed for load is debug too: it is the designed answer to overload, the request metrics
 * count it by status, and a line (with a stack) per shed request would add to the load it sheds.
 */
export function errorLogLevel(error: unknown, entry: CatalogEntry): 'warn' | 'error' | 'debug' {
  if (error instanceof StoreUnavailableError || isDatabaseUnavailable(error)) return 'warn'
  if ((error as Partial<FastifyError>).code === 'FST_UNDER_PRESSURE') return 'debug'
  return entry.status >= 500 ? 'error' : 'debug'
}

/** The log line of a failed request, at errorLogLevel's level. */
export function errorText(
  error: unknown,
  failure: { entry: CatalogEntry; message: string },
): [Record<string, unknown>, string] {
  if (error instanceof StoreUnavailableError) return [{ err: error }, 'database unreachable']
  if (isDatabaseUnavailable(error)) return [{ err: error }, 'database unavailable']
  if (failure.entry.status >= 500) return [{ err: error }, 'request failed']
  return [{ code: failure.entry.code, detail: failure.message }, 'request rejected']
}

/** The one error handler: every failure leaves as exactly `{error, message}`, internals only in the log. */
export function installErrorHandling(app: FastifyInstance, failures: FailureLog): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const failure = classify(error)
    failures.write(request.log, error, failure)
    if (failure.entry === errors.UNSUPPORTED_MEDIA_TYPE && request.method === 'PATCH') {
      // RFC 5789 §2.2: a patch in a format the resource does not take names the ones it does.
      reply.header('accept-patch', PATCH_MEDIA_TYPES.join(', '))
    }
    return sendError(reply, failure.entry, failure.message, failure.headers)
  })
  app.setNotFoundHandler((request) => {
    // Unknown routes are answered in refuseUnknownRoute, before a body is read; this handler is only
    // reached through reply.callNotFound().
    throw routeNotFound(request)
  })
}

function routeNotFound(request: FastifyRequest): AppError {
  return new AppError(errors.ROUTE_NOT_FOUND, `No route ${request.method} ${request.url.split('?')[0]}.`)
}

/**
 * An onRequest check: an unknown route is answered 404 at once. Fastify would otherwise read and
 * parse its body first, so that a bad body or a large one answered 400 or 413 where the route does
 * not even exist (404 comes first in the order errors win).
 */
export function refuseUnknownRoute(request: FastifyRequest): AppError | undefined {
  return request.is404 ? routeNotFound(request) : undefined
}

/**
 * RFC 9112 §3.2: a server answers 400 to an HTTP/1.1 request without a Host header. It is answered
 * before the router (Fastify reads Host), and the connection is closed, as Node itself would.
 */
export function refuseWithoutHost(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(response, headers, errors.BAD_REQUEST, 'An HTTP/1.1 request needs a Host header.')
}

/**
 * RFC 9112 §3.2: a Host that is not a host and an optional port (userinfo, a list, a space) is
 * refused, as a missing one is. A proxy in front may route by one reading of it and this server act
 * on another. An empty Host is valid (a target without an authority).
 */
export function refuseInvalidHost(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(
    response,
    headers,
    errors.BAD_REQUEST,
    'The Host header must be a host name or address, with an optional port.',
  )
}

/** RFC 9112 §3.2.2's host [":" port]: a reg-name (or IPv4 address), or an IP literal in brackets. */
export const VALID_HOST = /^(?:\[[0-9A-Za-z:.!$&'()*+,;=_~-]*\]|[0-9A-Za-z.!$&'()*+,;=_~%-]*)(?::[0-9]*)?$/

const HTTP_VERSION_MESSAGE = 'Only HTTP/1.1 and HTTP/1.0 are served.'

/**
 * RFC 9112 §2.3: this server speaks HTTP/1.1 and 1.0. Node's parser also takes a request line
 * without a version (HTTP/0.9's) and `HTTP/2.0` written as text, and would answer either as 1.1.
 */
export function refuseHttpVersion(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(response, headers, errors.BAD_REQUEST, HTTP_VERSION_MESSAGE)
}

/**
 * RFC 9112 §3.2 (Host) and RFC 9110 §5.3 (fields that are not lists): a request with two of them is
 * ambiguous. Node keeps the first of each and drops the rest silently, where a proxy in front may have
 * acted on the last; answered 400, and the connection closed, instead of guessing which was meant.
 */
export function refuseRepeatedField(name: string) {
  return (response: ServerResponse, headers: Record<string, string>): void =>
    refuseBeforeRouting(response, headers, errors.BAD_REQUEST, `A request may carry only one ${name} header.`)
}

/**
 * RFC 9110 §10.1.1: an expectation other than 100-continue cannot be met. Node's own answer is a
 * bare 417 that keeps the connection open, so a body the client sent anyway would be read as the
 * next request; this one has the Error shape and closes the connection.
 */
export function refuseExpectation(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(response, headers, errors.EXPECTATION_FAILED)
}

/**
 * RFC 9112 §6.1: a transfer coding the server does not apply cannot be read. The connection is closed
 * too: where such a body ends is not something to guess.
 */
export function refuseTransferCoding(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(response, headers, errors.BAD_REQUEST, 'Transfer-Encoding may only be chunked.')
}

/** The app is closing: the client should send this request again, to another instance or later. */
export function refuseWhileClosing(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(
    response,
    { ...headers, 'retry-after': '1' },
    errors.UNAVAILABLE,
    'The service is shutting down: retry after the time given.',
  )
}

function refuseBeforeRouting(
  response: ServerResponse,
  headers: Record<string, string>,
  entry: CatalogEntry,
  message: string = entry.message,
): void {
  const body = JSON.stringify(errorBody(entry, message))
  response.writeHead(entry.status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  })
  response.end(body)
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
}

const METHOD = /^[A-Z]{3,10} /
const CR = 13
const LF = 10
const SPACE = 32

/**
 * Node reports one overflow for the request line and the headers together. It was the URL alone that
 * was too long when the bytes it choked on begin with a request line whose URL already fills the
 * whole allowance (`maxHeaderSize`), whatever the allowance is.
 */
function overflowEntry(error: Error, maxHeaderSize: number) {
  const packet = (error as { rawPacket?: unknown }).rawPacket
  if (!Buffer.isBuffer(packet)) return errors.HEADERS_TOO_LARGE
  const method = METHOD.exec(packet.subarray(0, 11).toString('latin1'))
  if (method === null) return errors.HEADERS_TOO_LARGE
  const url = packet.subarray(method[0].length, method[0].length + maxHeaderSize)
  const whole = url.length === maxHeaderSize && !url.includes(CR) && !url.includes(LF) && !url.includes(SPACE)
  return whole ? errors.URI_TOO_LONG : errors.HEADERS_TOO_LARGE
}

/**
 * Answers the errors Node's HTTP parser raises before Fastify sees a request (a broken request line,
 * an oversized header block, a timeout) with the Error shape, then closes the connection.
 */
export function clientErrorHandler(
  maxHeaderSize: number,
  headers: (origin: string | undefined) => Record<string, string>,
) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // Bytes after a request that closes the connection (Connection: close, or HTTP/1.0): that
    // request is carried out, and its answer, under way, is the connection's last; the bytes are
    // ignored (RFC 9112 §9.6). A 400 instead would stand in for the answer of a request made all
    // the same (a create the client is told failed), or cut that answer off mid-way.
    if (error.code === 'HPE_CLOSED_CONNECTION' && (socket as ServedSocket)._httpMessage) return
    if (error.code === 'ECONNRESET' || !socket.writable || answered(socket)) {
      socket.destroy()
      return
    }
    // A well-formed version this server does not speak (HTTP/1.2, HTTP/3.0) is told so, as HTTP/2.0
    // is where Node lets it through (refuseHttpVersion); only a broken version is "malformed".
    if (
      error.code === 'HPE_INVALID_VERSION' &&
      (error as { reason?: unknown }).reason === 'Invalid HTTP version'
    ) {
      endWithError(socket, headers(originRead(error, socket)), errors.BAD_REQUEST, HTTP_VERSION_MESSAGE)
      return
    }
    const entry =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? overflowEntry(error, maxHeaderSize)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? errors.REQUEST_TIMEOUT
          : errors.BAD_REQUEST
    endWithError(socket, headers(originRead(error, socket)), entry)
  }
}

const ORIGIN_FIELD = /\r\norigin[ \t]*:[ \t]*([^\r\n]*)/gi

/**
 * The Origin of a request the parser gave up on, when it can still be read: without it a browser is
 * shown a network error in place of the 400, 408, 414 or 431 the service answered. Node keeps a
 * request's fields in JavaScript only once the request is whole (a body that stalled) or past 32 fields
 * (`parser._headers`); otherwise they are in the bytes of the read the parser failed in (`rawPacket`).
 * Fields of earlier reads of an unfinished head are held inside the parser, out of reach. An Origin
 * given twice, or not found, is none.
 */
function originRead(error: Error, socket: Socket): string | undefined {
  const parser = (socket as { parser?: { incoming?: IncomingMessage | null; _headers?: unknown } | null })
    .parser
  const found: string[] = []
  const incoming = parser?.incoming?.headers.origin
  if (incoming !== undefined) found.push(incoming)
  const flushed = parser?._headers
  if (Array.isArray(flushed)) {
    for (let i = 0; i + 1 < flushed.length; i += 2) {
      if (String(flushed[i]).toLowerCase() === 'origin') found.push(String(flushed[i + 1]))
    }
  }
  const packet = (error as { rawPacket?: unknown }).rawPacket
  if (Buffer.isBuffer(packet)) {
    for (const match of packet.toString('latin1').matchAll(ORIGIN_FIELD)) {
      found.push((match[1] as string).replace(/[ \t]+$/, ''))
    }
  }
  return found.length === 1 ? found[0] : undefined
}

/** A connection with the answer being written on it, if any (as Node's clientError fallback reads it). */
type ServedSocket = Socket & { _httpMessage?: ServerResponse | null }

/**
 * Whether the request being received already has its answer, in whole or begun: one refused before its
 * body (401, 404, …) is answered at once while Node reads on to discard the body, and a body that then
 * stalls or breaks must not get a second answer, which the client would take for its next request's.
 * Node's parser keeps the request it is reading (`parser.incoming`); a socket without a response in
 * progress (`_httpMessage`, as Node's own clientError fallback reads it) has sent that request's answer.
 */
function answered(socket: Socket): boolean {
  const inProgress = (socket as ServedSocket)._httpMessage
  if (inProgress?.headersSent) return true
  const incoming = (socket as { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming
  return incoming != null && !incoming.complete && !inProgress
}

/**
 * CONNECT asks for a tunnel, which only a proxy makes; Node hands such a request to a `connect`
 * listener or, without one, closes the connection without a word. The client is told why instead.
 */
export function refuseConnect(socket: Duplex, headers: Record<string, string>): void {
  endWithError(socket, headers, errors.BAD_REQUEST, 'CONNECT is not served: this is not a proxy.')
}

/**
 * An answer written straight to the socket, for requests no HTTP response object exists for. It
 * carries the headers every answer does (request id, security headers): a browser sniffs or frames
 * this one as readily as any other.
 */
function endWithError(
  socket: Duplex,
  headers: Record<string, string>,
  entry: CatalogEntry,
  message: string = entry.message,
): void {
  const body = JSON.stringify(errorBody(entry, message))
  let fields = ''
  for (const [name, value] of Object.entries(headers)) fields += `${name}: ${value}\r\n`
  socket.end(
    `HTTP/1.1 ${entry.status} ${STATUS_TEXT[entry.status]}\r\n` +
      fields +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  )
}
