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
    .finally(() => parentPort?.close())
})
