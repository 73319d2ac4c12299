import cluster from 'node:cluster'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { buildApp } from '../app.js'
import type { ServeConfig } from '../config.js'
import { addressLogger } from '../log.js'
import { joinClusterMetrics } from '../metrics/cluster.js'
import { createMetrics } from '../metrics/registry.js'
import { timeStore } from '../metrics/store-timing.js'
import { registerDispatcherLeaseMetric } from '../metrics/webhook-queue.js'
import { scheduleRetention } from '../retention.js'
import type { Store } from '../store/types.js'
import { loadJwtVerifier } from '../tokens/bearer.js'
import type { JwtSettings } from '../tokens/jwt.js'
import { TokenService } from '../tokens/service.js'
import type { TracingSettings } from '../tracing/settings.js'
import { startDispatcher } from '../webhooks/runner.js'
import { listenFailure, listenPort } from './cluster.js'
import { bootstrapToken, openStoreForServing } from './serve-store.js'

/**
 * Serves requests in this process, one process alone or one worker of a cluster, until a stop signal
 * (see serve): the app, the retention sweeps and the webhook dispatcher, on a store of its own.
 */
export async function serveRequests(
  config: ServeConfig,
  logger: Logger,
  onStopSignal: (onSignal: (signal: NodeJS.Signals) => void) => void,
): Promise<void> {
  // Each process of --workers N starts its own SDK; only ever loaded when tracing is on.
  const tracing = config.tracing && (await startServeTracing(config.tracing, logger))
  const metrics = createMetrics({ processMetrics: true })
  // A worker answers the primary's requests for its series from the start; its GET /metrics serves
  // every worker's, gathered by the primary.
  const scrapeMetrics = cluster.isWorker ? joinClusterMetrics(metrics.registry) : undefined
  const opened = await openStoreForServing(config, logger)
  const store = timeStore(tracing ? tracing.traceStore(opened) : opened, metrics)
  const verified = {
    hit: metrics.tokenVerifications.labels({ cache: 'hit' }),
    miss: metrics.tokenVerifications.labels({ cache: 'miss' }),
  }
  // Both series exist from the start at 0, so a rate() over either has a baseline.
  verified.hit.inc(0)
  verified.miss.inc(0)
  const tokens = new TokenService(store.tokens, {
    onBackgroundError: (err) => logger.warn({ err }, 'could not record token use'),
    onVerify: (cache) => verified[cache].inc(),
  })
  // Each process of --workers N fetches and caches the identity provider's keys itself.
  const jwts = config.jwtJwksUrl === undefined ? undefined : await loadJwtVerifier(jwtSettings(config))
  if (cluster.isPrimary) {
    // Open connections (PostgreSQL's pool and revocation listener) would keep a failed start running.
    await bootstrapToken(config, store, logger).catch(async (error: unknown) => {
      await store.close()
      throw error
    })
  }

  const lifecycle = { draining: false }
  const app = await buildApp({
    store,
    tokens,
    jwts,
    logger,
    lifecycle,
    bodyLimit: config.bodyLimit,
    allowPrivateWebhookUrls: config.webhookAllowPrivateUrls,
    idempotencyTtlMs: config.idempotencyTtlMs,
    timeouts: {
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    },
    metrics,
    scrapeMetrics,
    rateLimit: config.rateLimit,
    unauthenticatedRateLimit: config.unauthenticatedRateLimit,
    maxEventLoopDelayMs: config.maxEventLoopDelayMs,
    corsOrigins: config.corsOrigins,
    trustProxy: config.trustProxy,
    maxHeaderSize: config.maxHeaderSize,
    maxConnections: config.maxConnections,
    maxStreams: config.maxStreams,
    tracing: tracing?.http,
  })
  const stopRetention = scheduleRetention(store, config, logger, metrics)
  let dispatcher: ReturnType<typeof startDispatcher> | undefined
  registerDispatcherLeaseMetric(metrics, () => dispatcher?.dispatching() ?? false)

  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn({ signal }, 'already shutting down; --shutdown-timeout bounds the wait')
      return
    }
    stopping = true
    lifecycle.draining = true
    logger.info({ signal }, 'shutting down')
    const deadline = setTimeout(() => {
      logger.error(
        { timeoutMs: config.shutdownTimeoutMs },
        'shutdown timed out; exiting with requests unfinished',
      )
      process.exit(1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    try {
      // A sweep under way ends before its next chunk; the store is closed only once it has.
      const retentionStopped = stopRetention()
      // Still serving, but /readyz already says 503: load balancers take the instance out first.
      if (config.drainDelayMs > 0) await sleep(config.drainDelayMs)
      // The attempts' grace comes out of what the drain left of --shutdown-timeout: taken from the
      // whole of it, a long drain would run the stop past its deadline and exit 1 with the attempts
      // still leased instead of handed back.
      const left = config.shutdownTimeoutMs - config.drainDelayMs
      await Promise.all([app.close(), dispatcher?.stop(Math.min(2000, left / 2)), retentionStopped])
      await store.close()
      // What was traced up to the end goes out before the process does.
      await tracing?.sdk.shutdown(Math.min(2000, left / 2))
      logger.info('stopped')
      process.exit(0)
    } catch (err) {
      logger.error({ err }, 'shutdown failed')
      process.exit(1)
    }
  }
  // Listening before the handler is in place would let an early SIGTERM end the process at once.
  onStopSignal((signal) => void stop(signal))

  try {
    const address = await app.listen({
      host: config.host,
      port: listenPort(config),
      // In a cluster the primary announces the address once every worker is ready.
      listenTextResolver: (address) =>
        cluster.isWorker ? `worker ready on ${address}` : `listening on ${address}`,
    })
    // The framework writes that line at `info`; below it, the address is still told.
    if (!cluster.isWorker && !logger.isLevelEnabled('info')) {
      addressLogger(logger).info(`listening on ${address}`)
    }
  } catch (error) {
    // A port in use or a forbidden address: what was opened for serving (the retention timer,
    // PostgreSQL's pool and revocation listener) would keep the failed start running.
    await Promise.all([stopRetention(), app.close()])
    await store.close()
    await tracing?.sdk.shutdown(1000)
    throw listenFailure(config, error)
  }

  // Webhook delivery runs beside requests, never in their path: see startDispatcher.
  dispatcher = startDispatcher(store, config, logger, {
    onDisabled: () => metrics.webhooksDisabled.inc(),
  })
  const started = dispatcher
  store.events.watch?.(() => started.eventsWritten())
}

function jwtSettings(config: ServeConfig): JwtSettings {
  return {
    jwksUrl: config.jwtJwksUrl as string,
    // resolveServeConfig refuses a JWKS URL without both.
    issuer: config.jwtIssuer as string,
    audience: config.jwtAudience as string,
    scopeClaim: config.jwtScopeClaim,
    clockToleranceMs: config.jwtClockToleranceMs,
  }
}

/** The SDK, the request spans and the store's spans, loaded only when tracing is on. */
async function startServeTracing(settings: TracingSettings, logger: Logger) {
  const [{ startTracing }, { httpTracing }, { traceStore }] = await Promise.all([
    import('../tracing/sdk.js'),
    import('../tracing/http.js'),
    import('../tracing/store-spans.js'),
  ])
  const sdk = await startTracing(settings, (failure) => logger.warn(failure, 'traces could not be exported'))
  return {
    sdk,
    http: httpTracing(),
    traceStore: (store: Store) => traceStore(store, store.kind === 'postgres' ? 'postgresql' : 'sqlite'),
  }
}
