import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginCallback } from 'fastify'
import type { RateLimit } from './config.js'
import { StreamTickets } from './events/stream-ticket.js'
import { AnswerHeaders } from './http/answer-headers.js'
import { requireBearer } from './http/auth.js'
import { installCompression } from './http/compression.js'
import { installErrorHandling, routerErrorHandler } from './http/errors.js'
import { FailureLog } from './http/failure-log.js'
import { installJsonBodyParser } from './http/json-body.js'
import { nodeServer, serverOptions, type Timeouts } from './http/node-server.js'
import { openApi } from './http/openapi.js'
import { clientErrorHandler } from './http/pre-routing.js'
import { installRateLimits, LIMIT_KEY_KINDS } from './http/rate-limit.js'
import { requestId } from './http/request-id.js'
import { QuietRequestLog } from './http/request-log.js'
import {
  recordRequestMetrics,
  recordUnknownRoute,
  recordUnrouted,
  requestRecorder,
} from './http/request-metrics.js'
import { consoleRoutes } from './http/routes/console.js'
import { eventStreamRoutes, type StreamTimings } from './http/routes/event-stream.js'
import { eventRoutes } from './http/routes/events.js'
import { healthRoutes, type Lifecycle } from './http/routes/health.js'
import { meRoutes } from './http/routes/me.js'
import { recognizeEveryMethod } from './http/routes/method-not-allowed.js'
import { metricsRoutes } from './http/routes/metrics.js'
import { plantBatchRoutes } from './http/routes/plant-batches.js'
import { plantRoutes } from './http/routes/plants.js'
import { tokenRoutes } from './http/routes/tokens.js'
import { webhookRoutes } from './http/routes/webhooks.js'
import { sharedSchemas } from './http/schemas.js'
import { installCors, installLoadShedding } from './http/security.js'
import { shapeSharingSerializers } from './http/serialization.js'
import { refuseUndecodableQueries, validatorCompiler } from './http/validation.js'
import { lazyChildLogger } from './log.js'
import { createMetrics, type Metrics } from './metrics/registry.js'
import { registerWebhookQueueMetrics } from './metrics/webhook-queue.js'
import { IdempotentCreates } from './plants/idempotency.js'
import type { Store } from './store/types.js'
import { type BearerVerifier, withJwts } from './tokens/bearer.js'
import type { TokenService } from './tokens/service.js'

export interface AppOptions {
  store: Store
  tokens: TokenService
  /** Verifies JWTs from the identity provider beside the opaque tokens; absent: JWTs are not accepted. */
  jwts?: BearerVerifier | undefined
  logger?: FastifyBaseLogger
  /** Largest accepted request body in bytes. */
  bodyLimit?: number
  /** Where the built console is (dist/console by default); without one, /console is not served. */
  consoleDir?: string
  lifecycle?: Lifecycle
  /** Accept loopback, private and link-local webhook URLs (local development and tests). */
  allowPrivateWebhookUrls?: boolean
  /** How long an Idempotency-Key's first answer is kept for replay. */
  idempotencyTtlMs?: number
  /** Socket timeouts; the serve command sets them, tests may leave Node's defaults. */
  timeouts?: Timeouts
  /** Where /metrics reads from; the token service and store should report into the same one. */
  metrics?: Metrics
  /**
   * What GET /metrics answers with; by default the text of `metrics`. A cluster worker answers with
   * every worker's series, gathered by the primary (metrics/cluster.ts).
   */
  scrapeMetrics?: () => Promise<string>
  /** Requests per token without a limit of its own; absent or null: no limit. */
  rateLimit?: RateLimit | null
  /** Requests per client address without a valid token; absent or null: no limit. */
  unauthenticatedRateLimit?: RateLimit | null
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
  /** The plugin that traces requests (tracing/http.ts), when tracing is on; absent: none. */
  tracing?: FastifyPluginCallback | undefined
  /** Change streams open at once (--max-streams); absent: DEFAULT_MAX_STREAMS. */
  maxStreams?: number
  /** The stream hub's intervals and backlog bound, for tests; absent: the service's own. */
  streamTimings?: StreamTimings
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
export const DEFAULT_MAX_STREAMS = 500

/** Builds the application. It knows nothing of ports or signals, so tests build as many as they like. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const lifecycle = options.lifecycle ?? { draining: false }
  const metrics = options.metrics ?? createMetrics()
  registerWebhookQueueMetrics(metrics, options.store.webhooks)
  const requestLog = new QuietRequestLog()
  const bodyLimit = options.bodyLimit ?? 64 * 1024
  const maxHeaderSize = options.maxHeaderSize ?? 16 * 1024
  const headers = new AnswerHeaders(options.corsOrigins)
  const recorder = requestRecorder(metrics)
  const server = nodeServer({
    lifecycle,
    bodyLimit,
    maxConnections: options.maxConnections ?? Number.POSITIVE_INFINITY,
    headersOf: (req) => headers.raw(requestId(req), req.headers.origin),
  })
  const app = Fastify({
    serverFactory: server.factory,
    trustProxy: options.trustProxy ?? false,
    loggerInstance: options.logger,
    bodyLimit,
    logController: requestLog,
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    genReqId: requestId,
    schemaController: { compilersFactory: { buildSerializer: shapeSharingSerializers } },
    clientErrorHandler: clientErrorHandler(
      maxHeaderSize,
      (origin) => headers.raw(randomUUID(), origin),
      server.connectionOf,
    ),
    frameworkErrors: routerErrorHandler((request, reply) => {
      headers.stamp(request, reply)
      recordUnrouted(request, reply, recorder, requestLog)
    }),
    ...serverOptions(options.timeouts ?? {}, maxHeaderSize),
  })

  // First, so that its span starts before any other hook runs and every route is traced.
  if (options.tracing) await app.register(options.tracing)
  recognizeEveryMethod(app)
  refuseUndecodableQueries(app)
  app.setValidatorCompiler(validatorCompiler)
  const failures = new FailureLog()
  installErrorHandling(app, failures)
  installJsonBodyParser(app)

  headers.install(app, (request, reply) => recordUnknownRoute(request, reply, recorder))
  recordRequestMetrics(app, recorder)
  await installCors(app, options.corsOrigins)
  await installLoadShedding(app, options.maxEventLoopDelayMs ?? 0)
  const limits = await installRateLimits(
    app,
    { token: options.rateLimit, address: options.unauthenticatedRateLimit },
    {
      onLimited: (key) => metrics.rateLimited.inc({ key }),
      onAlone: (error) =>
        app.log.warn(
          { err: error },
          'rate limits counted by this process alone: cannot settle them with the database',
        ),
      onShared: () => app.log.info('rate limits settled with the database again'),
    },
    options.store.rateLimits,
  )
  // Each series exists from the start at 0, so a rate() over it or an alert on it has a baseline.
  if (limits.token || limits.address) for (const key of LIMIT_KEY_KINDS) metrics.rateLimited.inc({ key }, 0)

  for (const schema of sharedSchemas) app.addSchema(schema)
  await installCompression(app)
  await openApi(app)
  await consoleRoutes(app, { root: options.consoleDir })

  const idempotency = new IdempotentCreates(
    options.store.plants,
    options.store.idempotency,
    options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS,
    Date.now,
    (error) => app.log.warn({ err: error }, 'could not purge expired idempotency keys'),
  )
  await app.register(healthRoutes, { store: options.store, lifecycle, failures })
  const verifier = options.jwts ? withJwts(options.tokens, options.jwts) : options.tokens
  const streamRecorder = recorder.of('GET', '/events/stream')
  await app.register(async (api) => {
    requireBearer(api, verifier, limits)
    await api.register(plantRoutes, { store: options.store, idempotency })
    await api.register(plantBatchRoutes, { store: options.store, idempotency })
    await api.register(eventRoutes, { store: options.store })
    await api.register(metricsRoutes, {
      metrics,
      scrape: options.scrapeMetrics ?? (() => metrics.registry.metrics()),
    })
    await api.register(webhookRoutes, {
      store: options.store,
      allowPrivateUrls: options.allowPrivateWebhookUrls ?? false,
    })
    await api.register(tokenRoutes, { tokens: options.tokens, rateLimit: options.rateLimit ?? null })
    await api.register(meRoutes)
    await api.register(eventStreamRoutes, {
      store: options.store,
      verifier,
      tickets: new StreamTickets(options.store.streamTickets, options.store.tokens, options.tokens.now),
      metrics,
      maxStreams: options.maxStreams ?? DEFAULT_MAX_STREAMS,
      draining: () => lifecycle.draining,
      timings: options.streamTimings,
      recordUnfinished: (request, reply) => {
        streamRecorder(reply.statusCode, reply.elapsedTime / 1000)
        requestLog.requestCompleted(undefined, request, reply)
      },
    })
  })

  app.addHook('preClose', (done) => {
    server.close()
    done()
  })
  return app
}
