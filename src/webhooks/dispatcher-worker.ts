// Entry point of the webhook dispatcher's worker thread (see runner.ts).
import { parentPort, workerData } from 'node:worker_threads'
import { createLogger } from '../log.js'
import { openStore } from '../store/open.js'
import { createDispatcher, type DispatcherThreadMessage, type DispatchSettings } from './runner.js'

const settings = workerData as DispatchSettings
const logger = createLogger(settings.logLevel)
// No busy timeout: the queue's transactions wait for the write lock without sleeping the thread.
const store = await openStore(settings.database, { busyTimeoutMs: 0 })
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
