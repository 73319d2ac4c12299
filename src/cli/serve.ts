import cluster from 'node:cluster'
import { rmSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import { buildApp } from '../app.js'
import type { ServeConfig } from '../config.js'
import { addressLogger, createLogger } from '../log.js'
import { bindCounter } from '../metrics/bound.js'
import { joinClusterMetrics } from '../metrics/cluster.js'
import { createMetrics } from '../metrics/registry.js'
import { timeStore } from '../metrics/store-timing.js'
import { registerDispatcherLeaseMetric } from '../metrics/webhook-queue.js'
import { scheduleRetention } from '../retention.js'
import { openStoreRetrying } from '../store/open.js'
import type { Store } from '../store/types.js'
import { SCOPES } from '../tokens/scopes.js'
import { TokenService } from '../tokens/service.js'
import { startDispatcher } from '../webhooks/runner.js'
import { listenPort, runPrimary, STOP_SIGNALS } from './cluster.js'
import { whyNotWritable, writePrivateFile } from './private-file.js'

/**
 * Runs the service until SIGTERM, SIGINT or SIGHUP: then /readyz turns 503, requests are still
 * served for --drain-delay, the port stops accepting, in-flight requests finish (within
 * --shutdown-timeout), webhook attempts still in flight get a moment to finish and the rest are handed
 * back to the queue, pending writes commit, the database closes, and the process exits 0. With --workers N above 1 this process becomes the cluster primary and
 * N worker processes serve the port (see cluster.ts).
 */
export async function serve(config: ServeConfig): Promise<void> {
  const logger = createLogger(config.logLevel)
  const onStopSignal = listenForStopSignals(logger)
  if (config.workers > 1 && cluster.isPrimary) {
    // Migrations and the bootstrap token happen once, before any worker opens the database, which
    // may still be starting as the workers' would be: retried alike.
    const store = await openStoreForServing(config, logger)
    try {
      await bootstrapToken(config, store, logger)
    } finally {
      await store.close()
    }
    await runPrimary(config, logger, onStopSignal)
    return
  }
  const metrics = createMetrics({ processMetrics: true })
  // A worker answers the primary's requests for its series from the start; its GET /metrics serves
  // every worker's, gathered by the primary.
  const scrapeMetrics = cluster.isWorker ? joinClusterMetrics(metrics.registry) : undefined
  const store = timeStore(await openStoreForServing(config, logger), metrics)
  const verified = {
    hit: bindCounter(metrics.tokenVerifications, { cache: 'hit' }),
    miss: bindCounter(metrics.tokenVerifications, { cache: 'miss' }),
  }
  const tokens = new TokenService(store.tokens, {
    onBackgroundError: (err) => logger.warn({ err }, 'could not record token use'),
    onVerify: (cache) => verified[cache].inc(),
  })
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
    throw error
  }

  // Webhook delivery runs beside requests, never in their path: see startDispatcher.
  dispatcher = startDispatcher(store, config, logger)
  const started = dispatcher
  store.events.watch?.(() => started.eventsWritten())
}

/** Opens the store with serve's settings, retrying an unreachable database for --database-startup-timeout. */
async function openStoreForServing(config: ServeConfig, logger: Logger): Promise<Store> {
  const store = await openStoreRetrying(
    config.database,
    { poolSize: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs },
    {
      timeoutMs: config.databaseStartupTimeoutMs,
      onRetry: (err, attempt) => logger.warn({ err: err.message, attempt }, 'database unreachable; retrying'),
    },
  )
  if (store.migrated.length > 0) logger.info({ migrations: store.migrated }, 'schema migrated')
  return store
}

// The mark bin/plantstore puts on its stop listeners for the time the modules load.
const STOP_WHILE_LOADING = Symbol.for('plantstore.stopWhileLoading')

/**
 * The stop signals' listeners, in place from the start for the process's life; the returned function
 * sets what a signal does from then on. Until serve's own stop is set, a SIGTERM, SIGINT or SIGHUP
 * ends the start with exit 0: nothing has been served or acknowledged yet, and an orchestrator stopping
 * a service that waits for its database (or for another instance's bootstrap) should not see it die
 * by the signal. A transaction left open by the exit is rolled back by the database; a bootstrap token
 * file written for it is written again by the next start, which finds no token. The listeners are
 * never taken away and put back: Node closes a signal's handle when its last listener goes, and a
 * signal already caught but not yet delivered then went with it, leaving a server that had been told
 * to stop serving on.
 */
function listenForStopSignals(logger: Logger): (onSignal: (signal: NodeJS.Signals) => void) => void {
  let current = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopped while starting, before serving anything')
    process.exit(0)
  }
  for (const signal of STOP_SIGNALS) {
    process.on(signal, (received) => current(received))
    // bin/plantstore's listeners for the time the modules load: this one now does their work.
    for (const listener of process.listeners(signal)) {
      if (STOP_WHILE_LOADING in listener) process.off(signal, listener)
    }
  }
  return (onSignal) => {
    current = onSignal
  }
}

/**
 * All or nothing: a token whose file could not be written would be a full-scope secret nobody has,
 * and would stop every later start from bootstrapping. So the file is written inside the transaction
 * that stores the token, which a failed write undoes, and removed again if the commit fails. The
 * store holds other instances' bootstraps off meanwhile, so instances started at once on an empty
 * store make one token, not one each.
 */
async function bootstrapToken(config: ServeConfig, store: Store, logger: Logger): Promise<void> {
  const file = config.bootstrapTokenFile
  if (!file) return
  let written = false
  try {
    const created = await new TokenService(store.tokens).createFirst('bootstrap', SCOPES, (token) => {
      try {
        writePrivateFile(file, `${token}\n`)
      } catch (error) {
        throw new Error(`cannot write --bootstrap-token-file ${file}: ${whyNotWritable(error)}`, {
          cause: error,
        })
      }
      written = true
    })
    if (created) logger.info({ tokenId: created.record.id, file }, 'bootstrap token created')
  } catch (error) {
    if (written) rmSync(file, { force: true })
    throw error
  }
}
