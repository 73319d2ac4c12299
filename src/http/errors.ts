import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { isDatabaseUnavailable, StoreUnavailableError } from '../store/errors.js'
import { KeysUnavailableError } from '../tokens/bearer.js'
import { hideSecrets } from '../tokens/format.js'
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

/** Seconds a client is told to wait when the identity provider's keys cannot be fetched (5 s is jose's fetch timeout). */
const KEYS_RETRY_AFTER = '5'

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
  if (error instanceof KeysUnavailableError) {
    // The identity provider is down or slow: the client's JWT may be good, and worth sending again.
    return {
      entry: errors.UNAVAILABLE,
      message: "The identity provider's keys cannot be fetched: retry after the time given.",
      headers: { 'retry-after': KEYS_RETRY_AFTER },
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
  if (error instanceof KeysUnavailableError) return 'warn'
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
  // The status and a short reason: never the provider's body, nor a stack, which says nothing of it.
  if (error instanceof KeysUnavailableError)
    return [{ status: error.status, reason: error.message }, 'identity provider keys unreachable']
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

/**
 * Fastify's `frameworkErrors`: a URL the router cannot read (a bad percent-escape, an over-long path
 * segment) never reaches a route or a hook (CORS's neither, nor the ones that count and log
 * requests). It is answered here, in the Error shape, after `answering` has given it the headers every
 * answer carries and had it counted and logged as a request no route matched.
 */
export function routerErrorHandler(answering: (request: FastifyRequest, reply: FastifyReply) => void) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    answering(request, reply)
    const failure = classify(error)
    sendError(reply, failure.entry, failure.message)
  }
}

function routeNotFound(request: FastifyRequest): AppError {
  // The path is the client's own, shown back to it; a secret pasted into it is not.
  return new AppError(
    errors.ROUTE_NOT_FOUND,
    `No route ${request.method} ${hideSecrets(request.url.split('?')[0] ?? '')}.`,
  )
}

/**
 * An onRequest check: an unknown route is answered 404 at once. Fastify would otherwise read and
 * parse its body first, so that a bad body or a large one answered 400 or 413 where the route does
 * not even exist (404 comes first in the order errors win).
 */
export function refuseUnknownRoute(request: FastifyRequest): AppError | undefined {
  return request.is404 ? routeNotFound(request) : undefined
}
