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
  /** The headers of an answer given before routing: request id, security headers, CORS's. */
  headersOf: (req: IncomingMessage) => Record<string, string>
}

export interface NodeServer {
  /** Fastify's `serverFactory`. */
  factory: FastifyServerFactory
  /**
   * Starts closing: a request that still arrives (pipelined, or on a connection kept alive) gets a
   * 503, and every connection with no answer to give is closed.
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

/**
 * RFC 9110 §10.1.1: `Expect: 100-continue` asks whether the body is wanted before it is sent. Node
 * would say yes at once; here the 100 goes out only when something starts reading the body, so a
 * request refused first (401, 403, 404, 415) is answered without the client sending its body. Such a
 * final answer closes the connection, since the unsent body cannot be skipped on it.
 */
function awaitContinue(req: IncomingMessage, res: ServerResponse): void {
  const keepAlive = res.shouldKeepAlive
  res.shouldKeepAlive = false
  req.once('resume', () => {
    // Node also resumes the request to discard its body after an answer: no 100 then.
    if (res.headersSent) return
    res.writeContinue()
    res.shouldKeepAlive = keepAlive
  })
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
 * A body nothing reads (an operation that takes none, or a request answered before its body: 401,
 * 404, 405, 415) is read by Node after the answer and thrown away, to keep the connection usable,
 * for as long as the client sends it. It is held to the body limit as a body that is read is: one
 * declared larger is not read at all, its answer closes the connection; one sent in chunks is cut
 * off with the connection once past the limit.
 */
function boundDiscardedBody(req: IncomingMessage, res: ServerResponse, bodyLimit: number): void {
  if (declaredLength(req) > bodyLimit) {
    res.shouldKeepAlive = false
    return
  }
  // Read here instead: Node's own discarding, once the answer is sent, counts nothing.
  let left = bodyLimit
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length
    if (left < 0) req.socket.destroy()
  })
}

/** A connection as Node's HTTP server keeps it (lib/_http_server.js). */
interface ServedSocket extends Socket {
  /** Set while the server has stopped reading; Node's own resume (a body being read) waits for it. */
  _paused?: boolean
  parser?: { resume(): void } | null
  /** The answer being written on it, if any (as Node's closeIdleConnections reads it). */
  _httpMessage?: unknown
}

/**
 * Stops reading a connection as Node does when answers queue up: by its flag, which keeps a request's
 * body being read from resuming the socket, and with the parser paused once the bytes already read
 * are parsed.
 */
function stopReading(socket: Socket): void {
  ;(socket as ServedSocket)._paused = true
  socket.pause()
}

/** Reads again, unless answers are waiting to be written: Node resumes then on the socket's drain. */
function startReading(socket: Socket): void {
  const served = socket as ServedSocket
  if (!served._paused || socket.writableNeedDrain) return
  served._paused = false
  served.parser?.resume()
  socket.resume()
}

/** The methods that change nothing (RFC 9110 §9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Node's HTTP server as the service runs it: requests it must not carry out refused before routing,
 * pipelined requests held while a write ahead of them is answered, connections bounded and closed
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
   * still arrive on a connection that was busy (pipelined, or kept alive after its answer).
   */
  let closing = false
  /** Every open connection: those with no answer to give are closed with the port. */
  const connections = new Set<Socket>()
  const factory: FastifyServerFactory = (handler, given) => {
    const settings = given as unknown as ServerSettings
    /** How a request that cannot go on to Fastify is answered; undefined when it can. */
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
    /** Each connection's latest request: one parsed behind the answer being written is queued. */
    const latest = new WeakMap<Socket, IncomingMessage>()
    const dispatch = (req: IncomingMessage, res: ServerResponse) => {
      // While draining (/readyz already 503), each answer closes its connection: a client that
      // keeps one alive would otherwise go on sending here until the port closes, and a request
      // sent as it closes is lost to a reset; a new connection goes where the balancer sends it.
      if (lifecycle.draining) res.shouldKeepAlive = false
      const refuse = refusal(req)
      if (refuse) refuse(res, headersOf(req))
      else handler(req, res)
    }
    /** Pipelined requests held until the answer ahead of them is sent. */
    const held = new WeakSet<IncomingMessage>()
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      // Parsed after an answer that closed the connection had already gone out (a body sent
      // without waiting for 100 Continue, refused before it was read, and a request behind that
      // body): its answer could never reach the client, so it is not carried out (RFC 9112 §9.6).
      if (req.socket.writableEnded) {
        req.socket.destroy()
        return
      }
      const ahead = latest.get(req.socket)
      latest.set(req.socket, req)
      // A pipelined request (its answer queued: no socket yet) runs at once only if it and the one
      // ahead, which is unanswered, are reads that run at once too (RFC 9112 §9.3.2). Any other is
      // held until its answer gets the socket: one behind an answer that closes the connection is
      // then never carried out (§9.6), since its client is never told, and a read sees the writes
      // sent before it.
      if (
        res.socket === null &&
        (!SAFE_METHODS.has(req.method ?? '') ||
          !SAFE_METHODS.has(ahead?.method ?? '') ||
          (ahead !== undefined && held.has(ahead)))
      ) {
        held.add(req)
        // Node stops reading a connection only once queued answers pile up, and a held request has
        // none yet: a client pipelining without reading its answers would have every request it
        // sends parsed and held. Reading waits until the last one held is let through.
        stopReading(req.socket)
        res.once('socket', () => {
          if (latest.get(req.socket) === req) startReading(req.socket)
          dispatch(req, res)
        })
      } else dispatch(req, res)
    }
    // A connection whose answer is written once closing has begun is ended after it, unless a
    // request is already queued behind it (pipelined; that one gets the 503 above). Kept alive, a
    // connection whose client sends nothing more would hold the shutdown up until
    // --keep-alive-timeout, past --shutdown-timeout if that is longer. Every answer writes its head here.
    class Response extends ServerResponse {
      override writeHead(statusCode: number, ...rest: unknown[]): this {
        if (closing) {
          // The request's: an answer queued behind another one has no socket of its own yet.
          const socket = this.req.socket
          if (socket && latest.get(socket) === this.req) {
            // Said in the answer (Connection: close), so that the client opens a new connection for
            // its next request instead of sending it on this one as it closes, to be reset unanswered.
            this.shouldKeepAlive = false
          } else {
            // Node's own listener, added before this one, has by then moved the connection on to the
            // next queued answer, if any (_httpMessage, as Node's closeIdleConnections reads it).
            this.once('finish', () => {
              if (socket && !(socket as ServedSocket)._httpMessage) socket.destroySoon()
            })
          }
        }
        // A body still arriving as its answer goes out is one nothing reads.
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
    server.on('checkContinue', (req, res) => {
      awaitContinue(req, res)
      onRequest(req, res)
    })
    server.on('checkExpectation', (req, res) => {
      latest.set(req.socket, req)
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
      connections.add(socket)
      socket.once('close', () => connections.delete(socket))
    })
    server.keepAliveTimeout = settings.keepAliveTimeout
    server.setTimeout(settings.connectionTimeout)
    return server as Server
  }
  return {
    factory,
    close() {
      closing = true
      // Node counts a connection as busy from the moment it opens or a request's head starts arriving
      // (its headers timeout runs from there), so closing idle ones leaves those a load balancer or a
      // browser opened ahead of use, and those whose client has sent part of a head: each would hold
      // the shutdown up until --headers-timeout, past --shutdown-timeout by default. A connection with
      // an answer to give (_httpMessage) is left to give it; on the others no request has reached the
      // service, so none is lost.
      for (const socket of connections) if (!(socket as ServedSocket)._httpMessage) socket.destroy()
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
    // Fastify's own 503 while closing is not the Error shape; the server's handler answers instead.
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
