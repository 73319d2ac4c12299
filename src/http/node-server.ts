import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerOptions,
  ServerResponse,
} from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyServerFactory } from 'fastify'
import { holdReading, releaseReading } from './hold-reading.js'
import {
  refuseConnect,
  refuseExpectation,
  refuseHttpVersion,
  refuseInvalidHost,
  refuseRepeatedField,
  refuseTransferCoding,
  refuseWhileClosing,
  refuseWithoutHost,
  VALID_HOST,
} from './pre-routing.js'
import type { Lifecycle } from './routes/health.js'

/** The settings Fastify would have applied to a server of its own (its `http` and timeout options). */
interface ServerSettings {
  http?: ServerOptions
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
}

export interface NodeServerOptions {
  lifecycle: Lifecycle
  /** Largest accepted request body in bytes; a body nothing reads is held to it too. */
  bodyLimit: number
  /** Open connections past this are closed at once. */
  maxConnections: number
  /** The headers of a response given before routing: request id, security headers, CORS's. */
  headersOf: (req: IncomingMessage) => Record<string, string>
}

export interface NodeServer {
  /** Fastify's `serverFactory`. */
  factory: FastifyServerFactory
  /** What the server keeps of a connection (undefined for one it has closed or never kept). */
  connectionOf(socket: Socket): Connection | undefined
  /**
   * Starts closing: a request that still arrives (pipelined, or on a connection kept alive) gets a
   * 503, and every connection with no response to give is closed.
   */
  close(): void
}

/**
 * Node undoes only `chunked` and hands the body on as it came, so a body sent with another transfer
 * coding before it (`gzip, chunked`) would be read as if it had none.
 */
function appliesTransferCoding(req: IncomingMessage): boolean {
  const coding = req.headers['transfer-encoding']
  return coding !== undefined && coding.toLowerCase() !== 'chunked'
}

/** The name of a Host, Authorization or Content-Type field the request carries more than once, if any. */
function repeatedSingleField(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders
  let host = 0
  let authorization = 0
  let contentType = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string
    // Length first: most fields are none of these, and this runs on every request.
    if (name.length === 4 && name.toLowerCase() === 'host') host++
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++
    else if (name.length === 12 && name.toLowerCase() === 'content-type') contentType++
  }
  if (host > 1) return 'Host'
  if (authorization > 1) return 'Authorization'
  // Node reads the body as the first Content-Type says, where a proxy may have checked the last.
  return contentType > 1 ? 'Content-Type' : undefined
}

/** The request's Content-Length as it came (an operation without a body drops the header), or -1. */
function declaredLength(req: IncomingMessage): number {
  const raw = req.rawHeaders
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() === 'content-length') return Number(raw[i + 1])
  }
  return -1
}

/**
 * A body nothing reads (an operation that takes none, or a request responded to before its body: 401,
 * 404, 405, 415) is read by Node after the response and thrown away, to keep the connection usable,
 * for as long as the client sends it. It is held to the body limit as a body that is read is: one
 * declared larger is not read at all, its response closes the connection; one sent in chunks is cut
 * off with the connection once past the limit.
 */
function boundDiscardedBody(req: IncomingMessage, res: ServerResponse, bodyLimit: number): void {
  if (declaredLength(req) > bodyLimit) {
    res.setHeader('connection', 'close')
    return
  }
  // Read here instead: Node's own discarding, once the response is sent, counts nothing.
  let left = bodyLimit
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length
    if (left < 0) req.socket.destroy()
  })
}

/** What the server keeps of one connection, from the public 'request', 'finish' and 'close' events. */
export interface Connection {
  /** The response to the latest request received on it. */
  latest?: ServerResponse
  /** The responses not yet sent in whole (queued behind one another when requests are pipelined). */
  readonly open: Set<ServerResponse>
}

/** The methods that change nothing (RFC 9110 §9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Node's HTTP server as the service runs it: requests it must not carry out refused before routing,
 * pipelined requests held while a write ahead of them awaits its response, connections bounded and closed
 * as shutdown begins, and 100 Continue sent only when a body is wanted.
 */
export function nodeServer({
  lifecycle,
  bodyLimit,
  maxConnections,
  headersOf,
}: NodeServerOptions): NodeServer {
  /**
   * Set once the app starts closing: the port is closed and idle connections too, but a request can
   * still arrive on a connection that was busy (pipelined, or kept alive after its response).
   */
  let closing = false
  /** Every open connection: those with no response to give are closed with the port. */
  const connections = new Map<Socket, Connection>()
  /** Requests whose client waits for 100 Continue before sending the body, until it is sent. */
  const awaitingContinue = new WeakSet<IncomingMessage>()
  const factory: FastifyServerFactory = (handler, given) => {
    const settings = given as unknown as ServerSettings
    /** How a request that cannot go on to Fastify is responded to; undefined when it can. */
    const refusal = (req: IncomingMessage) => {
      if (req.httpVersionMajor !== 1) return refuseHttpVersion
      const host = req.headers.host
      if (host === undefined) {
        if (req.httpVersionMinor === 1) return refuseWithoutHost
      } else if (!VALID_HOST.test(host)) return refuseInvalidHost
      if (closing) return refuseWhileClosing
      if (appliesTransferCoding(req)) return refuseTransferCoding
      const repeated = repeatedSingleField(req)
      return repeated === undefined ? undefined : refuseRepeatedField(repeated)
    }
    const dispatch = (req: IncomingMessage, res: ServerResponse) => {
      // While draining (/readyz already 503), each response closes its connection: a client that
      // keeps one alive would otherwise go on sending here until the port closes, and a request
      // sent as it closes is lost to a reset; a new connection goes where the balancer sends it.
      if (lifecycle.draining) res.setHeader('connection', 'close')
      const refuse = refusal(req)
      if (refuse) refuse(res, headersOf(req))
      else handler(req, res)
    }
    /** A response's request and connection are tracked until it is sent in whole or cut off. */
    const track = (req: IncomingMessage, res: ServerResponse): Connection => {
      const socket = req.socket
      // Every connection is kept from its 'connection' event; one past the limit never gets here.
      const tracked = connections.get(socket) ?? { open: new Set() }
      tracked.latest = res
      tracked.open.add(res)
      const settle = () => {
        tracked.open.delete(res)
        // Closing, a connection with no response left to give is ended: kept alive, one whose client
        // sends nothing more would hold the shutdown up until --keep-alive-timeout.
        if (closing && tracked.open.size === 0 && !socket.writableEnded) socket.end(() => socket.destroy())
      }
      res.once('finish', settle)
      res.once('close', settle)
      return tracked
    }
    /** Pipelined requests held until the response ahead of them is sent. */
    const held = new WeakSet<ServerResponse>()
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket
      // Parsed after a response that closed the connection had already gone out (a body sent
      // without waiting for 100 Continue, refused before it was read, and a request behind that
      // body): its response could never reach the client, so it is not carried out (RFC 9112 §9.6).
      if (socket.writableEnded) {
        socket.destroy()
        return
      }
      const connection = connections.get(socket)
      const ahead = connection?.latest
      const tracked = track(req, res)
      // A pipelined request (its response queued behind one not yet sent: no socket yet) runs at once
      // only if it and the one ahead are reads that run at once too (RFC 9112 §9.3.2). Any other is
      // held until the response ahead is sent: one behind a response that closes the connection is
      // then never carried out (§9.6), since its client is never told, and a read sees the writes
      // sent before it.
      if (
        res.socket === null &&
        ahead !== undefined &&
        !ahead.writableFinished &&
        (!SAFE_METHODS.has(req.method ?? '') || !SAFE_METHODS.has(ahead.req.method ?? '') || held.has(ahead))
      ) {
        held.add(res)
        // Node stops reading a connection only once queued responses pile up, and a held request has
        // none yet: a client pipelining without reading its responses would have every request it
        // sends parsed and held. Reading stops after the read at hand until the last one held is let
        // through.
        const waiting = () => held.has(res) && tracked.latest === res
        holdReading(socket, waiting)
        ahead.once('finish', () => {
          const last = waiting()
          held.delete(res)
          // The response ahead closed the connection: this request is never carried out.
          if (socket.writableEnded || socket.destroyed) return
          if (last) releaseReading(socket)
          dispatch(req, res)
        })
      } else dispatch(req, res)
    }
    // Every response writes its head here: the headers that close its connection are decided last.
    class Response extends ServerResponse {
      override writeHead(statusCode: number, ...rest: unknown[]): this {
        if (
          // Once closing, the connection's last response says so (the one to a request already queued
          // behind it says it then), so that the client opens a new connection for its next request
          // instead of sending it on this one as it closes, to be reset unresponded.
          (closing && connections.get(this.req.socket)?.latest === this) ||
          // RFC 9110 §10.1.1: a final response before 100 Continue leaves the body unsent, and whether
          // the client sends it anyway cannot be told: the connection cannot be reused.
          awaitingContinue.has(this.req)
        ) {
          this.setHeader('connection', 'close')
        }
        // A body still arriving as its response goes out is one nothing reads.
        if (!this.req.complete) boundDiscardedBody(this.req, this, bodyLimit)
        return super.writeHead(statusCode, ...(rest as [string?, OutgoingHttpHeaders?]))
      }
    }
    const server = createServer(
      // The request timeout goes in with the headers timeout, which Node checks against it as the
      // server is made: set afterwards, a headers timeout above Node’s default (5m) would be refused.
      {
        ...settings.http,
        requestTimeout: settings.requestTimeout,
        requireHostHeader: false,
        ServerResponse: Response,
      },
      onRequest,
    )
    // RFC 9110 §10.1.1: `Expect: 100-continue` asks whether the body is wanted before it is sent. Node
    // would say yes at once; here the 100 goes out only when something starts reading the body, so a
    // request refused first (401, 403, 404, 415) is responded to without the client sending its body.
    server.on('checkContinue', (req, res) => {
      awaitingContinue.add(req)
      req.once('resume', () => {
        // Node also resumes the request to discard its body after a response: no 100 then.
        if (res.headersSent) return
        res.writeContinue()
        awaitingContinue.delete(req)
      })
      onRequest(req, res)
    })
    server.on('checkExpectation', (req, res) => {
      track(req, res)
      refuseExpectation(res, headersOf(req))
    })
    server.on('connect', (req, socket) => refuseConnect(socket, headersOf(req)))
    server.on('connection', (socket: Socket) => {
      // Node asks the socket for its peer when the address is first read, and once the client is
      // gone (or its connection is cut for too large a body) it has none to give: a request without
      // a valid token would be counted against an `undefined` address that every such client
      // shares, and its log line would name no address. Read at once, it is kept for the
      // connection's life.
      void socket.remoteAddress
      // Memory per connection stays bounded under a flood. Node's own server.maxConnections would
      // do in one process, but in a cluster worker it refuses a connection the primary hands it,
      // and the primary hands it to another worker and back for as long as every worker is full:
      // the connection is never closed and the processes spin. Closed here it is closed at once,
      // in a worker as in a single process.
      if (connections.size >= maxConnections) {
        socket.destroy()
        return
      }
      connections.set(socket, { open: new Set() })
      socket.once('close', () => connections.delete(socket))
    })
    server.keepAliveTimeout = settings.keepAliveTimeout
    server.setTimeout(settings.connectionTimeout)
    return server as Server
  }
  return {
    factory,
    connectionOf: (socket) => connections.get(socket),
    close() {
      closing = true
      // Node counts a connection as busy from the moment it opens or a request's head starts arriving
      // (its headers timeout runs from there), so its closeIdleConnections() leaves those a load
      // balancer or a browser opened ahead of use, and those whose client has sent part of a head:
      // each would hold the shutdown up until --headers-timeout, past --shutdown-timeout by default.
      // A connection with a response to give is left to give it; on the others no request has
      // reached the service, so none is lost.
      for (const [socket, connection] of connections) if (connection.open.size === 0) socket.destroy()
    },
  }
}

/** Timeouts; Node's defaults where absent. */
export interface Timeouts {
  requestTimeoutMs?: number
  headersTimeoutMs?: number
  keepAliveTimeoutMs?: number
  connectionTimeoutMs?: number
}

/** Fastify's options for the server it builds through `factory`, and for its router. */
export function serverOptions(timeouts: Timeouts, maxHeaderSize: number) {
  return {
    // Fastify's own 503 while closing is not the Error shape; the server's handler responds instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle' as const,
    requestTimeout: timeouts.requestTimeoutMs ?? 0,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs ?? 72_000,
    connectionTimeout: timeouts.connectionTimeoutMs ?? 0,
    // A path parameter is bounded only by the request line itself (maxHeaderSize): an over-long id is
    // then the same 400 as any other id out of range, not a 414 about the URL's shape.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: maxHeaderSize },
    http: {
      headersTimeout: timeouts.headersTimeoutMs ?? 60_000,
      maxHeaderSize,
      // Node checks the header and request timeouts on this interval (30 s by default), which would
      // let a slow client hold a connection that long past its deadline.
      connectionsCheckingInterval: 1000,
    },
  }
}
