import type { IncomingHttpHeaders } from 'node:http'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  preParsingHookHandler,
  RequestPayload,
} from 'fastify'
import { AppError, errors } from '../errors.js'
import { parseJsonDocument, utf8Text } from '../plants/json.js'

/** Media types whose bodies are JSON; parameters such as `charset=utf-8` are allowed. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json']

/**
 * Replaces Fastify's JSON parser with one that keeps int64 ids exact (see plants/json.ts). An empty
 * body parses to `undefined`, which validation reports as a missing body.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  for (const type of JSON_MEDIA_TYPES) {
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, bytes, done) => {
      let body: unknown
      try {
        body = parseJsonBody(utf8Text(bytes as Buffer))
      } catch (error) {
        done(error as Error, undefined)
        return
      }
      done(null, body)
    })
  }
  // Route-level, so that a request costs only the hook its route needs: a GET or HEAD route's body is
  // never read, and needs neither.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const hook =
      route.schema?.body !== undefined
        ? refuseUnreadableBody
        : methods.some((method) => method !== 'GET' && method !== 'HEAD')
          ? ignoreBodyOf
          : undefined
    if (hook === undefined) return
    const own = route.preParsing
    route.preParsing = [hook, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])]
  })
}

/** A route with a body schema: before the body is read, so that 415 wins over 413 and 400. */
const refuseUnreadableBody: preParsingHookHandler = (request, _reply, payload, done) =>
  done(unreadableBody(request.headers), payload)

/** A route without one: see ignoreBody. */
const ignoreBodyOf: preParsingHookHandler = (request, _reply, payload, done) => {
  ignoreBody(request.headers)
  done(null, payload)
}

/**
 * An operation that takes no body (DELETE, and the webhook actions such as rotate-secret) ignores
 * one, as a GET does: content in such a request has no defined meaning (RFC 9110 §9.3.5), and
 * reading it could only turn a valid request into a 400, 413 or 415 its operation does not
 * document. Without these headers Fastify reads no body; Node discards the bytes once the answer is
 * sent, so the connection stays usable.
 */
function ignoreBody(headers: IncomingHttpHeaders): void {
  if (headers['content-type'] === undefined && headers['transfer-encoding'] === undefined) {
    if (headers['content-length'] === undefined || headers['content-length'] === '0') return
  }
  delete headers['content-type']
  delete headers['transfer-encoding']
  delete headers['content-length']
}

/**
 * A merge patch describes a change, so only PATCH takes application/merge-patch+json; a create, a
 * replacement or any other POST body is a whole document in application/json. A `preParsing` hook:
 * it runs before the body is read, so 415 wins over 413.
 */
export function plainJsonOnly(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
  done: (error: Error | null, payload?: RequestPayload) => void,
): void {
  if (/^\s*application\/merge-patch\+json/i.test(request.headers['content-type'] ?? '')) {
    done(new AppError(errors.UNSUPPORTED_MEDIA_TYPE))
    return
  }
  done(null, payload)
}

/** One parameter of a media type: its name, and its value quoted (escapes kept) or as a token. */
const PARAMETER = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/g

/**
 * A 415 for a body whose bytes are not plain UTF-8 JSON whatever they hold: one in another charset
 * (its bytes would be misread), or one with a content coding (its bytes are compressed). Undefined
 * for everything else, including a request without a body.
 */
export function unreadableBody(headers: IncomingHttpHeaders): AppError | undefined {
  const length = headers['content-length']
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined
  const coding = headers['content-encoding']
  // The field is a list (RFC 9110 §8.4) whose empty elements count for nothing: empty, or naming only
  // identity, it applies no coding, and the bytes are the body as sent.
  const applied = (element: string) => {
    const name = element.trim().toLowerCase()
    return name !== '' && name !== 'identity'
  }
  if (coding?.split(',').some(applied)) {
    return new AppError(
      errors.UNSUPPORTED_MEDIA_TYPE,
      `A request body is accepted without a content coding; this one has Content-Encoding: ${coding}.`,
    )
  }
  // Every charset named counts (a repeated one is ambiguous unless both say UTF-8), and one inside a
  // quoted value is not a parameter.
  for (const [, name, quoted, token] of (headers['content-type'] ?? '').matchAll(PARAMETER)) {
    if (name?.toLowerCase() !== 'charset') continue
    const value = (quoted?.replace(/\\(.)/g, '$1') ?? token ?? '').toLowerCase()
    if (value !== 'utf-8' && value !== 'utf8') {
      return new AppError(errors.UNSUPPORTED_MEDIA_TYPE, 'A JSON request body must be UTF-8 (charset=utf-8).')
    }
  }
  return undefined
}

/** A JSON request body, exact; undefined when blank. Throws the 400 AppError of malformed JSON. */
export function parseJsonBody(text: string): unknown {
  // Blank in JSON's sense only: a no-break space or a byte order mark is text, and not JSON.
  if (text.length === 0 || /^[\t\n\r ]*$/.test(text)) return undefined
  return parseJsonDocument(text)
}
