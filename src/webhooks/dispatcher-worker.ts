// Entry point of the webhook dispatcher's worker thread (see runner.ts).
import { parentPort, workerData } from 'node:worker_threads'
import { createLogger } from '../log.js'
import { openStore } from '../store/open.js'
import { createDispatcher, type DispatcherThreadMessage, type DispatchSettings } from './runner.js'

const settings = workerData as DispatchSettings
const logger = createLogger(settings.logLevel)
/**
 * The dispatcher's queries are short and few at once (a pass, a batch of outcomes, a lease request):
 * on PostgreSQL two pooled connections serve them, so an instance opens at most --database-pool-size
 * plus three (these two and its revocation listener), however large the pool is set.
 */
const DISPATCHER_POOL_SIZE = 2

// No busy timeout: the queue's transactions wait for the write lock without sleeping the thread.
// It checks no tokens, so it needs no revocation listener of its own, and the process that starts it
// has migrated the database.
const store = await openStore(settings.database, {
  busyTimeoutMs: 0,
  poolSize: Math.min(settings.databasePoolSize, DISPATCHER_POOL_SIZE),
  timeoutMs: settings.databaseTimeoutMs,
  watchRevocations: false,
  migrate: false,
})
const dispatcher = createDispatcher(store, settings, logger, (leaseHeld) =>
  parentPort?.postMessage({ leaseHeld } satisfies DispatcherThreadMessage),
)
dispatcher.start()

parentPort?.on('message', (message: 'wake' | { stop: number }) => {
  if (message === 'wake') {
    dispatcher.eventsWritten()
    return
  }
  void dispatcher
    .stop(message.stop)
    .then(() => store.close())
    .finally(() => parentPort?.close())
})
