import cluster from 'node:cluster'
import type { Logger } from 'pino'
import type { ServeConfig } from '../config.js'
import { createLogger } from '../log.js'
import { runPrimary, STOP_SIGNALS } from './cluster.js'
import { bootstrapToken, openStoreForServing } from './serve-store.js'

/**
 * Runs the service until SIGTERM, SIGINT or SIGHUP: then /readyz turns 503, requests are still
 * served for --drain-delay, the port stops accepting, in-flight requests finish (within
 * --shutdown-timeout), webhook attempts still in flight get a moment to finish and the rest are handed
 * back to the queue, pending writes commit, the database closes, and the process exits 0. With
 * --workers N above 1 this process becomes the cluster primary and N worker processes serve the port
 * (see cluster.ts).
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
  // Loaded only where requests are served: a cluster's primary never builds the app, so it starts
  // its workers sooner and holds less.
  const { serveRequests } = await import('./serve-requests.js')
  await serveRequests(config, logger, onStopSignal)
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
 * signal already caught but not yet delivered would go with it, leaving a server that has been told
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
