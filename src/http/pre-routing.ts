import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { type CatalogEntry, errors } from '../errors.js'
import { errorBody } from './errors.js'
import type { Connection } from './node-server.js'

// The responses given before a request reaches Fastify (its router, hooks and error handler): requests
// Node's parser gives up on, and those the server refuses to carry out (node-server.ts). Each has the
// Error shape and the headers every response carries, and closes the connection.

/**
 * RFC 9112 §3.2: a server responds 400 to an HTTP/1.1 request without a Host header. It is responded to
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

/**
 * RFC 9112 §2.3: this server speaks HTTP/1.1 and 1.0. Node's parser also takes a request line
 * without a version (HTTP/0.9's) and `HTTP/2.0` written as text, and would respond to either as 1.1.
 */
export function refuseHttpVersion(response: ServerResponse, headers: Record<string, string>): void {
  refuseBeforeRouting(response, headers, errors.BAD_REQUEST, 'Only HTTP/1.1 and HTTP/1.0 are served.')
}

/**
 * RFC 9112 §3.2 (Host) and RFC 9110 §5.3 (fields that are not lists): a request with two of them is
 * ambiguous. Node keeps the first of each and drops the rest silently, where a proxy in front may have
 * acted on the last; refused with 400, and the connection closed, instead of guessing which was meant.
 */
export function refuseRepeatedField(name: string) {
  return (response: ServerResponse, headers: Record<string, string>): void =>
    refuseBeforeRouting(response, headers, errors.BAD_REQUEST, `A request may carry only one ${name} header.`)
}

/**
 * RFC 9110 §10.1.1: an expectation other than 100-continue cannot be met. Node's own response is a
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
 * Responds to the errors Node's HTTP parser raises before Fastify sees a request (a broken request line,
 * an oversized header block, a timeout) with the Error shape, then closes the connection.
 */
export function clientErrorHandler(
  maxHeaderSize: number,
  headers: (origin: string | undefined) => Record<string, string>,
  connectionOf: (socket: Socket) => Connection | undefined,
) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    const connection = connectionOf(socket)
    // Bytes after a request that closes the connection (Connection: close, or HTTP/1.0): that
    // request is carried out, and its response, under way, is the connection's last; the bytes are
    // ignored (RFC 9112 §9.6). A 400 instead would stand in for the response of a request made all
    // the same (a create the client is told failed), or cut that response off mid-way.
    if (error.code === 'HPE_CLOSED_CONNECTION' && connection !== undefined && connection.open.size > 0) return
    if (error.code === 'ECONNRESET' || !socket.writable || answered(connection)) {
      socket.destroy()
      return
    }
    const entry =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? overflowEntry(error, maxHeaderSize)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? errors.REQUEST_TIMEOUT
          : errors.BAD_REQUEST
    endWithError(socket, headers(originOf(error, connection)), entry)
  }
}

const ORIGIN_FIELD = /\r\norigin[ \t]*:[ \t]*([^\r\n]*)/gi

/**
 * The Origin of a request the parser gave up on, when it can be read: without it a browser is shown
 * a network error in place of the 400, 408, 414 or 431 the service sent. A request whose head was
 * whole (a body that stalled or broke) has its fields; otherwise they are read from the bytes of the
 * read the parser failed in (`rawPacket`), and fields of earlier reads of an unfinished head, which
 * Node holds inside its parser, are not read. An Origin given twice, or not found, is none.
 */
function originOf(error: Error, connection: Connection | undefined): string | undefined {
  const found: string[] = []
  const receiving = connection?.latest?.req
  if (receiving !== undefined && !receiving.complete && receiving.headers.origin !== undefined) {
    found.push(receiving.headers.origin)
  }
  const packet = (error as { rawPacket?: unknown }).rawPacket
  if (Buffer.isBuffer(packet)) {
    for (const match of packet.toString('latin1').matchAll(ORIGIN_FIELD)) {
      found.push((match[1] as string).replace(/[ \t]+$/, ''))
    }
  }
  return found.length === 1 ? found[0] : undefined
}

/**
 * Whether the connection already has a response under way, or the request being received already
 * has its response: one refused before its body (401, 404, …) is sent at once while Node reads on to
 * discard the body, and a body that then stalls or breaks must not get a second response, which the
 * client would take for its next request's.
 */
function answered(connection: Connection | undefined): boolean {
  if (connection === undefined) return false
  for (const response of connection.open) if (response.headersSent) return true
  const receiving = connection.latest
  return receiving !== undefined && connection.open.size === 0 && !receiving.req.complete
}

/**
 * CONNECT asks for a tunnel, which only a proxy makes; Node hands such a request to a `connect`
 * listener or, without one, closes the connection without a word. The client is told why instead.
 */
export function refuseConnect(socket: Duplex, headers: Record<string, string>): void {
  endWithError(socket, headers, errors.BAD_REQUEST, 'CONNECT is not served: this is not a proxy.')
}

/**
 * A response written straight to the socket, for requests no HTTP response object exists for. It
 * carries the headers every response does (request id, security headers): a browser sniffs or frames
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
