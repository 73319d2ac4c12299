import { writeFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildApp } from '../app.js'
import type { ServeConfig } from '../config.js'
import { createLogger } from '../log.js'
import { createMetrics } from '../metrics/registry.js'
import { timeStore } from '../metrics/store-timing.js'
import { scheduleRetention } from '../retention.js'
import { openStoreRetrying } from '../store/open.js'
import { SCOPES } from '../tokens/scopes.js'
import { TokenService } from '../tokens/service.js'
import { startDispatcher } from '../webhooks/runner.js'

/**
 * Runs the service until SIGTERM or SIGINT: then /readyz turns 503, requests are still served for
 * --drain-delay, the port stops accepting, in-flight requests finish (within --shutdown-timeout),
 * webhook attempts still in flight get a moment to finish and the rest are handed back to the queue,
 * pending writes commit, the database closes,
 * and the process exits 0.
 */
export async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel)
  const metrics = createMetrics({ processMetrics: true })
  const opened = await openStoreRetrying(
    config.database,
    { poolSize: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs },
    {
      timeoutMs: config.databaseStartupTimeoutMs,
      onRetry: (err, attempt) => logger.warn({ err: err.message, attempt }, 'database unreachable; retrying'),
    },
  )
  const store = timeStore(opened, metrics)
  const tokens = new TokenService(store.tokens, {
    onBackgroundError: (err) => logger.warn({ err }, 'could not record token use'),
    onVerify: (cache) => metrics.tokenVerifications.inc({ cache }),
  })

  if (config.bootstrapTokenFile && (await store.tokens.count()) === 0) {
    const { token, record } = await tokens.create('bootstrap', SCOPES)
    writeFileSync(config.bootstrapTokenFile, `${token}\n`, { mode: 0o600 })
    logger.info({ tokenId: record.id, file: config.bootstrapTokenFile }, 'bootstrap token created')
  }

  const lifecycle = { draining: false }
  const app = await buildApp({
    store,
    tokens,
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
    rateLimit: config.rateLimit,
    maxEventLoopDelayMs: config.maxEventLoopDelayMs,
    corsOrigins: config.corsOrigins,
    trustProxy: config.trustProxy,
    maxHeaderSize: config.maxHeaderSize,
  })
  // Past this, Node closes new sockets at once: memory per connection stays bounded under a flood.
  app.server.maxConnections = config.maxConnections
  const stopRetention = scheduleRetention(store, config, logger, metrics)

  await app.listen({
    host: config.host,
    port: config.port,
    listenTextResolver: (address) => `listening on ${address}`,
  })

  // Webhook delivery runs beside requests, never in their path: see startDispatcher.
  const dispatcher = startDispatcher(store, config, logger)
  store.events.watch?.(() => dispatcher.eventsWritten())

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
      stopRetention()
      // Still serving, but /readyz already says 503: load balancers take the instance out first.
      if (config.drainDelayMs > 0) await sleep(config.drainDelayMs)
      await Promise.all([app.close(), dispatcher.stop(Math.min(2000, config.shutdownTimeoutMs / 2))])
      await store.close()
      logger.info('stopped')
      process.exit(0)
    } catch (err) {
      logger.error({ err }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}
