// Entry point of the webhook dispatcher's worker thread (see runner.ts).
import { parentPort, workerData } from 'node:worker_threads'
import { createLogger } from '../log.js'
import { openStore } from '../store/open.js'
import {
  createDispatcher,
  type DispatcherCommand,
  type DispatcherThreadMessage,
  type DispatchSettings,
  dispatcherStoreOptions,
} from './runner.js'

const settings = workerData as DispatchSettings
const logger = createLogger(settings.logLevel)
// A thread has a module graph of its own: the serving thread's SDK does not reach it.
const tracing = settings.tracing
  ? await (await import('../tracing/sdk.js')).startTracing(settings.tracing, (failure) =>
      logger.warn(failure, 'traces could not be exported'),
    )
  : undefined
const store = await openStore(settings.database, dispatcherStoreOptions(settings))
const dispatcher = createDispatcher(store, settings, logger, {
  onLeaseChange: (leaseHeld) => parentPort?.postMessage({ leaseHeld } satisfies DispatcherThreadMessage),
  onDisabled: (disabled) => parentPort?.postMessage({ disabled } satisfies DispatcherThreadMessage),
})
dispatcher.start()

parentPort?.on('message', (message: DispatcherCommand) => {
  if ('wake' in message) {
    dispatcher.eventsWritten()
    return
  }
  void dispatcher
    .stop(message.stop)
    .then(() => store.close())
    .then(() => tracing?.shutdown(1000))
    .finally(() => parentPort?.close())
})
