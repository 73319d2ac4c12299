import { randomUUID } from 'node:crypto'
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerOptions,
  ServerResponse,
} from 'node:http'
import type { Socket } from 'node:net'
import { constants as zlib } from 'node:zlib'
import compress from '@fastify/compress'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify'
import type { RateLimit } from './config.js'
import { requireBearer } from './http/auth.js'
import {
  classify,
  clientErrorHandler,
  installErrorHandling,
  refuseConnect,
  refuseExpectation,
  refuseHttpVersion,
  refuseInvalidHost,
  refuseRepeatedField,
  refuseTransferCoding,
  refuseUnknownRoute,
  refuseWhileClosing,
  refuseWithoutHost,
  sendError,
  VALID_HOST,
} from './http/errors.js'
import { FailureLog } from './http/failure-log.js'
import { installJsonBodyParser } from './http/json-body.js'
import { openApi } from './http/openapi.js'
import { installRateLimit, LIMIT_KEY_KINDS, type Limiter } from './http/rate-limit.js'
import { recordRequestMetrics, requestRecorder } from './http/request-metrics.js'
import { healthRoutes, type Lifecycle } from './http/routes/health.js'
import { recognizeEveryMethod } from './http/routes/method-not-allowed.js'
import { metricsRoutes } from './http/routes/metrics.js'
import { plantRoutes } from './http/routes/plants.js'
import { webhookRoutes } from './http/routes/webhooks.js'
import { sharedSchemas } from './http/schemas.js'
import { corsHeaders, installCors, installLoadShedding, securityHeaders } from './http/security.js'
import { refuseUndecodableQueries, validatorCompiler } from './http/validation.js'
import { lazyChildLogger, logsAt } from './log.js'
import { createMetrics, type Metrics, methodLabel, UNMATCHED_ROUTE } from './metrics/registry.js'
import { registerWebhookQueueMetrics } from './metrics/webhook-queue.js'
import { IdempotentCreates } from './plants/idempotency.js'
import type { Store } from './store/types.js'
import { holdsToken } from './tokens/format.js'
import type { TokenService } from './tokens/service.js'

export interface AppOptions {
  store: Store
  tokens: TokenService
  logger?: FastifyBaseLogger
  /** Largest accepted request body in bytes. */
  bodyLimit?: number
  lifecycle?: Lifecycle
  /** Accept loopback, private and link-local webhook URLs (local development and tests). */
  allowPrivateWebhookUrls?: boolean
  /** How long an Idempotency-Key's first answer is kept for replay. */
  idempotencyTtlMs?: number
  /** Socket timeouts; the serve command sets them, tests may leave Node's defaults. */
  timeouts?: {
    requestTimeoutMs?: number
    headersTimeoutMs?: number
    keepAliveTimeoutMs?: number
    connectionTimeoutMs?: number
  }
  /** Where /metrics reads from; the token service and store should report into the same one. */
  metrics?: Metrics
  /**
   * What GET /metrics answers with; by default the text of `metrics`. A cluster worker answers with
   * every worker's series, gathered by the primary (metrics/cluster.ts).
   */
  scrapeMetrics?: () => Promise<string>
  /** Per token (per address without one); absent or null: no limit. */
  rateLimit?: RateLimit | null
  /** Shed load past this event-loop lag; absent or 0: never. */
  maxEventLoopDelayMs?: number
  /** Browser origins allowed by CORS; absent or null: CORS off. */
  corsOrigins?: string[] | null
  /** Addresses or CIDR ranges of proxies whose X-Forwarded-* headers are believed. */
  trustProxy?: string[] | null
  /** Largest request line plus headers, in bytes (Node's default is 16 KiB). */
  maxHeaderSize?: number
  /** Open connections past this are closed at once; absent: no limit. */
  maxConnections?: number
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

interface ServerSettings {
  http?: ServerOptions
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
}

/**
 * The client's X-Request-Id when it is a sane one, else a new id. A token is never taken as one: it
 * would be sent back in a response header, which proxies and browsers' tools log as they see fit.
 */
function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) && !holdsToken(incoming)
    ? incoming
    : randomUUID()
}

/**
 * Per-request lines go to debug: at the default level a request costs no log write, and failures
 * that matter (5xx) are logged by the error handler at error level.
 */
class QuietRequestLog extends LogController {
  override incomingRequest(): void {}
  /** `metadata.ms` where the reply's own clock never ran (an answer given before routing). */
  override requestCompleted(
    _error: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    // The line's object is not even built at the default level.
    if (!logsAt(request.log, 'debug')) return
    request.log.debug(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: typeof metadata?.ms === 'number' ? metadata.ms : reply.elapsedTime,
        // The client's address, taken from X-Forwarded-For only behind a --trust-proxy.
        ip: request.ip,
      },
      'request completed',
    )
  }
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

const ACCEPT_ENCODING = 'accept-encoding'

/** A Vary value with Accept-Encoding added, spelled as the compression plugin adds it. */
function varyAlsoByEncoding(vary: string | undefined): string {
  if (vary === undefined) return ACCEPT_ENCODING
  return vary.includes(ACCEPT_ENCODING) ? vary : `${vary}, ${ACCEPT_ENCODING}`
}

function varyByEncoding(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const vary = reply.getHeader('vary')
  reply.header('vary', varyAlsoByEncoding(vary === undefined ? undefined : String(vary)))
  done(null, payload)
}

/**
 * The framework answers HEAD by running GET and then giving a bodiless answer `Content-Length: 0`,
 * which on a 304 claims the resource is empty: RFC 9110 §8.6 allows there only the length a 200 would
 * have. Appended after the framework's own HEAD hook, so that a HEAD's 304 carries what GET's does.
 */
function headNotModifiedWithoutLength(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  if (reply.statusCode === 304) reply.removeHeader('content-length')
  done(null, payload)
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

/** Builds the application. It knows nothing of ports or signals, so tests build as many as they like. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const lifecycle = options.lifecycle ?? { draining: false }
  const metrics = options.metrics ?? createMetrics()
  registerWebhookQueueMetrics(metrics, options.store.webhooks)
  const requestLog = new QuietRequestLog()
  const bodyLimit = options.bodyLimit ?? 64 * 1024
  const maxHeaderSize = options.maxHeaderSize ?? 16 * 1024
  const maxConnections = options.maxConnections ?? Number.POSITIVE_INFINITY
  const security = securityHeaders()
  /**
   * Set once the app starts closing: the port is closed and idle connections too, but a request can
   * still arrive on a connection that was busy (pipelined, or kept alive after its answer).
   */
  let closing = false
  /** Every open connection: those with no answer to give are closed with the port. */
  const connections = new Set<Socket>()
  const record = requestRecorder(metrics)
  /** The request id and the security headers, which go on every answer. */
  const stamp = (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id)
    reply.headers(security)
  }
  const app = Fastify({
    serverFactory: (handler, given) => {
      // The settings Fastify would have applied to a server of its own (the options given below).
      const settings = given as unknown as ServerSettings
      // Node's own answer to a request without Host is a bare 400; this one has the Error shape.
      const stamped = (req: IncomingMessage) => ({
        'x-request-id': requestId(req),
        ...security,
        ...corsHeaders(options.corsOrigins, req.headers.origin),
      })
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
        if (refuse) refuse(res, stamped(req))
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
        refuseExpectation(res, stamped(req))
      })
      server.on('connect', (req, socket) => refuseConnect(socket, stamped(req)))
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
      return server
    },
    trustProxy: options.trustProxy ?? false,
    loggerInstance: options.logger,
    bodyLimit,
    logController: requestLog,
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    genReqId: requestId,
    clientErrorHandler: clientErrorHandler(maxHeaderSize, (origin) => ({
      'x-request-id': randomUUID(),
      ...security,
      ...corsHeaders(options.corsOrigins, origin),
    })),
    // A URL the router cannot read (a bad percent-escape, an over-long path segment) never reaches a
    // route or a hook (CORS's neither, nor the ones that count and log requests): answered here, in
    // the Error shape, with the headers every answer carries, and counted and logged as a request no
    // route matched.
    frameworkErrors: (error, request, reply) => {
      // Fastify starts a reply's clock only past routing, so reply.elapsedTime is 0 here: timed from
      // now, which is as good as from arrival, the router having just given up.
      const started = performance.now()
      stamp(request, reply)
      reply.headers(corsHeaders(options.corsOrigins, request.headers.origin))
      reply.raw.once('finish', () => {
        const ms = performance.now() - started
        record(methodLabel(request.method), UNMATCHED_ROUTE, reply.statusCode, ms / 1000)
        requestLog.requestCompleted(undefined, request, reply, { ms })
      })
      const failure = classify(error)
      sendError(reply, failure.entry, failure.message)
    },
    // Fastify's own 503 while closing is not the Error shape; the server's handler answers instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestTimeout: options.timeouts?.requestTimeoutMs ?? 0,
    keepAliveTimeout: options.timeouts?.keepAliveTimeoutMs ?? 72_000,
    connectionTimeout: options.timeouts?.connectionTimeoutMs ?? 0,
    // A path parameter is bounded only by the request line itself (maxHeaderSize): an over-long id is
    // then the same 400 as any other id out of range, not a 414 about the URL's shape.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: maxHeaderSize },
    http: {
      headersTimeout: options.timeouts?.headersTimeoutMs ?? 60_000,
      maxHeaderSize,
      // Node checks the header and request timeouts on this interval (30 s by default), which would
      // let a slow client hold a connection that long past its deadline.
      connectionsCheckingInterval: 1000,
    },
  })

  recognizeEveryMethod(app)
  refuseUndecodableQueries(app)
  app.setValidatorCompiler(validatorCompiler)
  const failures = new FailureLog()
  installErrorHandling(app, failures)
  installJsonBodyParser(app)

  app.addHook('onRequest', (request, reply, done) => {
    stamp(request, reply)
    done()
  })
  recordRequestMetrics(app, record)
  await installCors(app, options.corsOrigins)
  // After CORS's hook, so that a browser on an allowed origin can read the 404 of a path it got wrong.
  app.addHook('onRequest', (request, _reply, done) => done(refuseUnknownRoute(request)))
  await installLoadShedding(app, options.maxEventLoopDelayMs ?? 0)
  let limit: Limiter | undefined
  if (options.rateLimit) {
    limit = await installRateLimit(app, options.rateLimit, {
      onLimited: (key) => metrics.rateLimited.inc({ key }),
    })
    // Each series exists from the start at 0, so a rate() over it or an alert on it has a baseline.
    for (const key of LIMIT_KEY_KINDS) metrics.rateLimited.inc({ key }, 0)
  }

  for (const schema of sharedSchemas) app.addSchema(schema)
  // Large pages are worth compressing; brotli at quality 4 compresses well without the CPU of 11.
  // Request bodies are never decompressed: unreadableBody answers a body's content coding, and the
  // plugin's own check would refuse a coding it does not know (or IDENTITY) even on a GET or a DELETE.
  await app.register(compress, {
    globalDecompression: false,
    threshold: 1024,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
  })
  // RFC 9110 §12.5.5: an answer of a route that compresses says it varies by Accept-Encoding in
  // every variant, not only the compressed one the plugin marks, or a cache could hand a compressed
  // copy to a client that cannot read it (or keep serving an uncompressed one to all). Every HEAD
  // route, those the framework makes from a GET included, answers a 304 as its GET does.
  app.addHook('onRoute', (route) => {
    const hooks = route.onSend === undefined ? [] : [route.onSend].flat()
    if (route.compress !== false) hooks.push(varyByEncoding)
    if (route.method === 'HEAD') hooks.push(headNotModifiedWithoutLength)
    route.onSend = hooks
  })
  await openApi(app)

  const idempotency = new IdempotentCreates(
    options.store.plants,
    options.store.idempotency,
    options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS,
    Date.now,
    (error) => app.log.warn({ err: error }, 'could not purge expired idempotency keys'),
  )
  await app.register(healthRoutes, { store: options.store, lifecycle, failures })
  await app.register(async (api) => {
    requireBearer(api, options.tokens, limit)
    await api.register(plantRoutes, { store: options.store, idempotency })
    await api.register(metricsRoutes, {
      metrics,
      scrape: options.scrapeMetrics ?? (() => metrics.registry.metrics()),
    })
    await api.register(webhookRoutes, {
      store: options.store,
      allowPrivateUrls: options.allowPrivateWebhookUrls ?? false,
    })
  })

  app.addHook('preClose', (done) => {
    closing = true
    // Node counts a connection as busy from the moment it opens or a request's head starts arriving
    // (its headers timeout runs from there), so closing idle ones leaves those a load balancer or a
    // browser opened ahead of use, and those whose client has sent part of a head: each would hold
    // the shutdown up until --headers-timeout, past --shutdown-timeout by default. A connection with
    // an answer to give (_httpMessage) is left to give it;
    // on the others no request has reached the service, so none is lost.
    for (const socket of connections) if (!(socket as ServedSocket)._httpMessage) socket.destroy()
    done()
  })
  return app
}
