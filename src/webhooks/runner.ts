import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { ServeConfig } from '../config.js'
import type { Store } from '../store/types.js'
import { Dispatcher } from './dispatcher.js'
import { WebhookSender } from './sender.js'

/** The serve command's handle on webhook delivery, wherever it runs. */
export interface DispatcherHandle {
  /** New events were committed in this process. */
  eventsWritten(): void
  /** Stops within about `graceMs`, handing unfinished attempts back to the queue. */
  stop(graceMs: number): Promise<void>
  /** Whether this process holds the dispatcher lease, so that it is the one sending webhooks. */
  dispatching(): boolean
}

/** What the dispatcher's worker thread tells the thread that started it. */
export interface DispatcherThreadMessage {
  leaseHeld: boolean
}

/** What a dispatcher needs from the serve settings; also what the worker thread receives. */
export type DispatchSettings = Pick<
  ServeConfig,
  | 'database'
  | 'logLevel'
  | 'webhookAllowPrivateUrls'
  | 'webhookRetryScheduleMs'
  | 'webhookTimeoutMs'
  | 'webhookDisableAfterMs'
  | 'webhookPollIntervalMs'
  | 'webhookLeaseTtlMs'
>

export function createDispatcher(
  store: Store,
  settings: DispatchSettings,
  logger: FastifyBaseLogger,
  onLeaseChange?: (held: boolean) => void,
): Dispatcher {
  return new Dispatcher({
    store: store.webhooks,
    sender: new WebhookSender({
      timeoutMs: settings.webhookTimeoutMs,
      allowPrivateUrls: settings.webhookAllowPrivateUrls,
    }),
    logger,
    retrySchedule: settings.webhookRetryScheduleMs,
    timeoutMs: settings.webhookTimeoutMs,
    disableAfterMs: settings.webhookDisableAfterMs,
    pollIntervalMs: settings.webhookPollIntervalMs,
    lease: { store: store.leases, ttlMs: settings.webhookLeaseTtlMs, onChange: onLeaseChange },
  })
}

/**
 * Starts webhook delivery for a serving process. It runs on a worker thread with its own database
 * connection, so signing, sending and the queue's bookkeeping use another core and never hold up
 * the event loop that answers requests. A `sqlite::memory:` store cannot be opened twice, so its
 * dispatcher runs on the main thread instead.
 */
export function startDispatcher(
  store: Store,
  settings: DispatchSettings,
  logger: FastifyBaseLogger,
): DispatcherHandle {
  if (settings.database.kind === 'sqlite' && settings.database.path === ':memory:') {
    const dispatcher = createDispatcher(store, settings, logger)
    dispatcher.start()
    return {
      eventsWritten: () => dispatcher.eventsWritten(),
      stop: (graceMs) => dispatcher.stop(graceMs),
      dispatching: () => dispatcher.dispatching(),
    }
  }
  const worker = new Worker(new URL('./dispatcher-worker.js', import.meta.url), {
    workerData: settings,
    // Its live data is a few hundred deliveries at most; V8's default young generation would let the
    // thread grow tens of megabytes of garbage between collections.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  })
  let leaseHeld = false
  worker.on('message', (message: DispatcherThreadMessage) => {
    leaseHeld = message.leaseHeld
  })
  let exited = false
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      exited = true
      if (code !== 0) logger.error({ code }, 'webhook dispatcher stopped unexpectedly')
      resolve()
    })
  })
  worker.on('error', (err) => logger.error({ err }, 'webhook dispatcher failed'))
  return {
    eventsWritten: () => {
      if (!exited) worker.postMessage('wake')
    },
    stop: async (graceMs) => {
      if (exited) return
      worker.postMessage({ stop: graceMs })
      // A worker that does not finish in time is ended; its leases run out and others resend.
      const deadline = setTimeout(() => void worker.terminate(), graceMs + 2000)
      await exit
      clearTimeout(deadline)
    },
    dispatching: () => leaseHeld && !exited,
  }
}
