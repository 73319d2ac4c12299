import { Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import type { ServeConfig } from '../config.js'
import { RestartBackoff } from '../restart-backoff.js'
import type { OpenOptions } from '../store/open.js'
import type { Store } from '../store/types.js'
import { Dispatcher } from './dispatcher.js'
import { WebhookSender } from './sender.js'

/** The serve command's handle on webhook delivery, wherever it runs. */
export interface DispatcherHandle {
  /** New events were committed in this process: look for their deliveries now, not at the next poll. */
  eventsWritten(): void
  /** Stops within about `graceMs`, handing unfinished attempts back to the queue. */
  stop(graceMs: number): Promise<void>
  /** Whether this process holds the dispatcher lease, so that it is the one sending webhooks. */
  dispatching(): boolean
}

/**
 * What the dispatcher's worker thread tells the thread that started it: the lease taken or lost, or
 * a subscription it disabled for failing (counted by a metric of that thread's registry).
 */
export type DispatcherThreadMessage = { leaseHeld: boolean } | { disabled: string }

/** What a serving process hears of its dispatcher, wherever it runs. */
export interface DispatcherEvents {
  /** A subscription was disabled for failing. */
  onDisabled?: (webhookId: string) => void
}

/** What the thread that started the dispatcher's worker thread tells it. */
export type DispatcherCommand = { wake: true } | { stop: number }

/** What a dispatcher needs from the serve settings; also what the worker thread receives. */
export type DispatchSettings = Pick<
  ServeConfig,
  | 'database'
  | 'databasePoolSize'
  | 'databaseTimeoutMs'
  | 'logLevel'
  | 'webhookAllowPrivateUrls'
  | 'webhookRetryScheduleMs'
  | 'webhookTimeoutMs'
  | 'webhookDisableAfterMs'
  | 'webhookPollIntervalMs'
  | 'webhookMaxInFlight'
  | 'webhookLeaseTtlMs'
  | 'tracing'
>

/**
 * The dispatcher's queries are short and few at once (a pass, a batch of outcomes, a lease request):
 * on PostgreSQL two pooled connections serve them, so an instance opens at most --database-pool-size
 * plus three (these two and its revocation listener), however large the pool is set.
 */
const DISPATCHER_POOL_SIZE = 2

/**
 * How the dispatcher's thread opens its own connection. No busy timeout: the queue's transactions
 * wait for the write lock without sleeping the thread. It checks no tokens, so it needs no revocation
 * listener of its own, and the process that starts it has migrated the database.
 */
export function dispatcherStoreOptions(settings: DispatchSettings): OpenOptions {
  return {
    busyTimeoutMs: 0,
    poolSize: Math.min(settings.databasePoolSize, DISPATCHER_POOL_SIZE),
    timeoutMs: settings.databaseTimeoutMs,
    watchRevocations: false,
    migrate: false,
  }
}

export function createDispatcher(
  store: Store,
  settings: DispatchSettings,
  logger: FastifyBaseLogger,
  events: DispatcherEvents & { onLeaseChange?: (held: boolean) => void } = {},
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
    perWebhook: settings.webhookMaxInFlight,
    lease: { store: store.leases, ttlMs: settings.webhookLeaseTtlMs, onChange: events.onLeaseChange },
    onDisabled: events.onDisabled,
  })
}

/**
 * Webhook delivery for a serving process, started at the first sign of work: at start or at a later
 * check (every poll interval) a subscription exists or an event awaits fan-out, or a commit of this
 * process queued deliveries. Until then the process has no dispatcher thread (its
 * memory, and its polling) and holds no dispatcher lease; once started it runs until stop, its
 * thread started again if it ends before.
 */
export function startDispatcher(
  store: Store,
  settings: DispatchSettings,
  logger: FastifyBaseLogger,
  events: DispatcherEvents = {},
): DispatcherHandle {
  let running: DispatcherHandle | undefined
  let stopped = false
  let restart: NodeJS.Timeout | undefined
  const backoff = new RestartBackoff(1000, 60_000, 60_000)
  const start = () => {
    if (running || stopped || restart) return
    clearInterval(checks)
    const startedAt = Date.now()
    running = runDispatcher(store, settings, logger, events, () => {
      // A thread that could not open its store (a write lock held past the busy timeout, a full disk,
      // a database unreachable at that moment) or that crashed leaves every later event undelivered
      // until the process restarts: it is started again, backing off while it keeps failing.
      running = undefined
      if (stopped) return
      const delayMs = backoff.after(Date.now() - startedAt)
      logger.warn({ delayMs }, 'webhook dispatcher will be started again')
      restart = setTimeout(() => {
        restart = undefined
        start()
      }, delayMs)
      restart.unref()
    })
  }
  let checking = false
  let failing = false
  const check = async () => {
    if (checking || running) return
    checking = true
    try {
      const work = await store.webhooks.hasWork()
      failing = false
      if (work) start()
    } catch (err) {
      // The next check asks again; serving requests does not depend on it. Said once per outage, not
      // at every poll.
      if (!failing) logger.warn({ err }, 'could not check for webhook work')
      failing = true
    } finally {
      checking = false
    }
  }
  const checks = setInterval(() => void check(), settings.webhookPollIntervalMs)
  checks.unref()
  void check()
  return {
    eventsWritten: () => {
      if (running) running.eventsWritten()
      // Its first pass, at start (or at its restart), takes these events.
      else start()
    },
    stop: async (graceMs) => {
      stopped = true
      clearInterval(checks)
      clearTimeout(restart)
      await running?.stop(graceMs)
    },
    dispatching: () => running?.dispatching() ?? false,
  }
}

/**
 * Runs the dispatcher on a worker thread with its own database connection, so signing, sending and
 * the queue's bookkeeping use another core and never hold up the event loop that serves requests.
 * A `sqlite::memory:` store cannot be opened twice, so its dispatcher runs on the main thread instead.
 */
function runDispatcher(
  store: Store,
  settings: DispatchSettings,
  logger: FastifyBaseLogger,
  events: DispatcherEvents,
  onUnexpectedExit: () => void,
): DispatcherHandle {
  if (settings.database.kind === 'sqlite' && settings.database.path === ':memory:') {
    const dispatcher = createDispatcher(store, settings, logger, events)
    dispatcher.start()
    return {
      // `:memory:` needs no fsync before sending: its store has no durable point to wait for.
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
    if ('leaseHeld' in message) leaseHeld = message.leaseHeld
    else events.onDisabled?.(message.disabled)
  })
  let exited = false
  let ended = false
  let stopping = false
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      exited = true
      // Ending a thread that overran its time to stop is part of a normal shutdown (its attempts
      // are sent again once their leases run out), and ending it makes its exit code 1.
      if (ended) {
        logger.warn(
          'webhook dispatcher did not stop in time and was ended; its unfinished attempts are sent again once their leases run out',
        )
      } else if (code !== 0 || !stopping) logger.error({ code }, 'webhook dispatcher stopped unexpectedly')
      if (!stopping) onUnexpectedExit()
      resolve()
    })
  })
  worker.on('error', (err) => logger.error({ err }, 'webhook dispatcher failed'))
  return {
    eventsWritten: () => {
      if (!exited) worker.postMessage({ wake: true } satisfies DispatcherCommand)
    },
    stop: async (graceMs) => {
      if (exited) return
      stopping = true
      worker.postMessage({ stop: graceMs } satisfies DispatcherCommand)
      // A worker that does not finish in time is ended; its leases run out and others resend.
      const deadline = setTimeout(() => {
        ended = true
        void worker.terminate()
      }, graceMs + 2000)
      await exit
      clearTimeout(deadline)
    },
    dispatching: () => leaseHeld && !exited,
  }
}
