import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyBaseLogger } from 'fastify'
import type { AttemptResult, ClaimedDelivery, LeaseStore, WebhookStore } from '../store/types.js'
import { endWebhookAttempt, startWebhookAttempt } from '../tracing/webhook-attempt.js'
import { DispatchLease } from './dispatch-lease.js'
import { nextAttemptDelay } from './retry.js'
import type { WebhookSender } from './sender.js'
import { signedHeaders } from './signing.js'

export interface DispatcherOptions {
  store: WebhookStore
  sender: WebhookSender
  logger: FastifyBaseLogger
  /** Delays before the 2nd, 3rd, … attempt; after the last one the delivery is failed. */
  retrySchedule: number[]
  /** The longest an attempt may take; leases outlast it so a live sender keeps its delivery. */
  timeoutMs: number
  /** A subscription whose attempts have all failed for this long is disabled. */
  disableAfterMs: number
  /** How often to look for new events and due retries when there is nothing in hand. */
  pollIntervalMs?: number
  /** Shortest time between two passes (and two result batches); 0 for no batching. */
  batchWindowMs?: number
  /** Most due deliveries one pass leases, over all subscriptions: a bound on its transaction. */
  claimBatch?: number
  /** Attempts in flight at once to one subscription, so a slow one cannot take every slot. */
  perWebhook?: number
  /**
   * Attempts in flight at once over all subscriptions, a bound on the sockets held. Once reached, a
   * subscription with none in flight may still start one: a few whose receivers hang fill this cap,
   * and the others must not wait for their timeouts.
   */
  concurrency?: number
  /**
   * The database lease that makes this the one dispatcher among every process on the database; it
   * fans out and claims only while it holds it. Without one it always does (a lone dispatcher).
   */
  lease?: { store: LeaseStore; ttlMs: number; onChange?: (held: boolean) => void }
  /** Told of each subscription this dispatcher disabled for failing (the metric counts them). */
  onDisabled?: (webhookId: string) => void
  now?: () => number
}

/**
 * A lease outlasts the attempt by as long again (at least 5 s), time to record its outcome. A lease
 * that runs out too soon costs a duplicate send; one too long delays recovery after a crash.
 */
function leaseFor(timeoutMs: number): number {
  return timeoutMs + Math.max(5000, timeoutMs)
}

/**
 * The longest a receiver that keeps failing goes without a failed attempt while it has deliveries
 * pending: the schedule's longest delay at its widest spread, then the attempt. A longer pause means
 * nothing was tried (no events, every schedule spent), not that it kept failing: after it, the next
 * failure starts a new failing spell, and one failure after a quiet week does not disable.
 */
function longestPauseWhileFailing(retrySchedule: number[], timeoutMs: number): number {
  return Math.max(0, ...retrySchedule) * 1.2 + leaseFor(timeoutMs)
}
const FAN_OUT_BATCH = 500

/**
 * Moves events from the outbox to subscribers. Each pass fans out any event left without its
 * deliveries (both stores write a change's deliveries in its own transaction, so only an older
 * database holds such events), then leases due deliveries and sends them concurrently; each response
 * is recorded (batched into one transaction) with its next attempt per the retry schedule. Sends run
 * beside the request path and never hold a database lock, so a slow receiver delays neither other
 * receivers nor `POST /plants`.
 * Every process runs one against the database, but only the holder of the dispatcher lease does
 * this work; the others wait to take over. The store's per-delivery leases are what keep any two
 * dispatchers from sending one attempt twice at once, the dispatcher lease only saves the others'
 * polling and contention.
 */
export class Dispatcher {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  private readonly inFlight = new Map<string, { webhookId: string; abort: AbortController }>()
  private readonly perWebhookInFlight = new Map<string, number>()
  private results: AttemptResult[] = []
  private flushing: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private passing: Promise<void> | undefined
  private again = false
  private wakeSoon: NodeJS.Timeout | undefined
  /**
   * When the last pass started, by the monotonic clock: by the wall clock, a step back (NTP, a VM
   * resumed) put it in the future and the batch window lasted as long as the step, stalling passes.
   */
  private lastPassAt = Number.NEGATIVE_INFINITY
  /** The last pass failed, and said so. */
  private failing = false
  private readonly batchWindowMs: number
  private stopped = true
  private readonly pollIntervalMs: number
  private readonly claimBatch: number
  private readonly perWebhook: number
  private readonly concurrency: number
  private readonly now: () => number
  private readonly lease: DispatchLease | undefined

  constructor(private readonly options: DispatcherOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? 100
    this.batchWindowMs = options.batchWindowMs ?? 3
    this.claimBatch = options.claimBatch ?? 64
    this.perWebhook = options.perWebhook ?? 16
    this.concurrency = options.concurrency ?? 256
    this.now = options.now ?? Date.now
    const lease = options.lease
    this.lease =
      lease &&
      new DispatchLease({
        store: lease.store,
        holder: this.owner,
        ttlMs: lease.ttlMs,
        logger: options.logger,
        now: this.now,
        onChange: (held) => {
          // A new holder starts at once rather than at its next poll.
          if (held) this.wake()
          lease.onChange?.(held)
        },
      })
  }

  start(): void {
    this.stopped = false
    this.lease?.start()
    this.wake()
  }

  /** Whether this dispatcher does the work now: it holds the dispatcher lease, or needs none. */
  dispatching(): boolean {
    return this.lease?.held() ?? true
  }

  /**
   * New events were committed (or more work is waiting): run a pass soon. Passes start at most
   * every `batchWindowMs`, so under load each takes many events and deliveries in one short
   * transaction instead of competing with creates for the write lock once per create.
   */
  eventsWritten(): void {
    if (this.wakeSoon || this.stopped) return
    const wait = Math.max(0, this.lastPassAt + this.batchWindowMs - performance.now())
    this.wakeSoon = setTimeout(() => {
      this.wakeSoon = undefined
      this.wake()
    }, wait)
  }

  /** Runs a pass now (or right after the current one), instead of at the next poll. */
  wake(): void {
    if (this.stopped) return
    if (this.passing) {
      this.again = true
      return
    }
    clearTimeout(this.timer)
    this.lastPassAt = performance.now()
    this.passing = this.pass().finally(() => {
      this.passing = undefined
      if (this.stopped) return
      if (this.again) {
        // Through the batch window, so requests waiting on the event loop go first under a backlog.
        this.again = false
        this.eventsWritten()
      } else {
        this.timer = setTimeout(() => this.wake(), this.pollIntervalMs)
      }
    })
  }

  /**
   * Stops taking work, gives in-flight attempts up to `graceMs` to finish, then aborts the rest and
   * hands their leases back so another process (or the next start) sends them without waiting.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    clearTimeout(this.wakeSoon)
    await this.passing
    const deadline = performance.now() + graceMs
    while (this.inFlight.size > 0 && performance.now() < deadline) await sleep(20)
    const unfinished = [...this.inFlight.keys()]
    for (const { abort } of this.inFlight.values()) abort.abort()
    await this.flushing
    await this.flushResults()
    try {
      await this.options.store.release(this.owner, unfinished)
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not release webhook leases')
    }
    // Last, so that whoever takes over finds the attempts handed back above already due.
    await this.lease?.stop()
    this.options.sender.close()
  }

  private async pass(): Promise<void> {
    const { store, logger } = this.options
    if (!this.dispatching()) return
    try {
      // A backlog is fanned out batch by batch; a lease lost meanwhile stops the loop between two.
      while (
        (await store.fanOut(FAN_OUT_BATCH, new Date(this.now()))) === FAN_OUT_BATCH &&
        this.dispatching()
      ) {}
      if (!this.dispatching()) return
      const free = this.concurrency - this.inFlight.size
      const limit = free > 0 ? Math.min(free, this.claimBatch) : this.claimBatch
      const claimed = await store.claim({
        owner: this.owner,
        now: new Date(this.now()),
        leaseMs: leaseFor(this.options.timeoutMs),
        limit,
        // At the cap, only subscriptions with nothing in flight get one attempt each.
        perWebhook: free > 0 ? this.perWebhook : 1,
        inFlight: this.perWebhookInFlight,
      })
      for (const delivery of claimed) void this.deliver(delivery)
      // A full batch suggests more is due: look again at once rather than after a poll interval.
      if (claimed.length === limit) this.again = true
      this.failing = false
    } catch (error) {
      // Through a database outage every pass fails alike, ten a second at the default poll interval:
      // the first failure says why, and the next line waits until a pass has succeeded again.
      if (!this.failing) logger.error({ err: error }, 'webhook dispatch pass failed')
      this.failing = true
    }
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const abort = new AbortController()
    this.inFlight.set(delivery.id, { webhookId: delivery.webhookId, abort })
    this.perWebhookInFlight.set(
      delivery.webhookId,
      (this.perWebhookInFlight.get(delivery.webhookId) ?? 0) + 1,
    )
    const sentAt = this.now()
    const secrets = [delivery.secret]
    if (delivery.previousSecret && (delivery.previousSecretExpiresAt?.getTime() ?? 0) > sentAt) {
      secrets.push(delivery.previousSecret)
    }
    const headers = signedHeaders(delivery.eventId, delivery.payload, secrets, new Date(sentAt))
    // Adds the attempt's traceparent to its headers, when traced.
    const span = startWebhookAttempt(delivery, headers)
    const outcome = await this.options.sender.send(delivery.url, headers, delivery.payload, abort.signal)
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300
    endWebhookAttempt(span, outcome, ok)
    this.inFlight.delete(delivery.id)
    const left = (this.perWebhookInFlight.get(delivery.webhookId) ?? 1) - 1
    if (left > 0) this.perWebhookInFlight.set(delivery.webhookId, left)
    else this.perWebhookInFlight.delete(delivery.webhookId)
    if (abort.signal.aborted) return

    const at = this.now()
    const delay = ok ? null : nextAttemptDelay(this.options.retrySchedule, delivery.attempt)
    const error = ok ? null : (outcome.error ?? `answered ${outcome.statusCode}`)
    if (!ok) {
      this.options.logger.debug(
        { webhookId: delivery.webhookId, deliveryId: delivery.id, attempt: delivery.attempt, error },
        'webhook attempt failed',
      )
    }
    this.results.push({
      deliveryId: delivery.id,
      webhookId: delivery.webhookId,
      owner: this.owner,
      at: new Date(at),
      ok,
      statusCode: outcome.statusCode,
      error,
      durationMs: outcome.durationMs,
      body: outcome.body,
      bodyTruncated: outcome.bodyTruncated,
      nextAttemptAt: delay === null ? null : new Date(at + delay),
      disableIfFailingSince: new Date(at - this.options.disableAfterMs),
      failingContinuesSince: new Date(
        at - longestPauseWhileFailing(this.options.retrySchedule, this.options.timeoutMs),
      ),
    })
    this.scheduleFlush()
    this.eventsWritten()
  }

  /** Results that arrive within one batch window are recorded in one transaction. */
  private scheduleFlush(): void {
    if (this.flushing) return
    this.flushing = new Promise<void>((done) => setTimeout(done, this.batchWindowMs))
      .then(() => this.flushResults())
      .finally(() => {
        this.flushing = undefined
        if (this.results.length > 0) this.scheduleFlush()
      })
  }

  private async flushResults(): Promise<void> {
    const batch = this.results
    if (batch.length === 0) return
    this.results = []
    try {
      const disabled = await this.options.store.complete(batch)
      for (const webhookId of disabled) {
        this.options.logger.warn({ webhookId }, 'webhook disabled: its attempts have failed for too long')
        this.options.onDisabled?.(webhookId)
      }
    } catch (error) {
      // The leases stay; once they run out the attempts are made again (at-least-once).
      this.options.logger.error({ err: error }, 'could not record webhook attempts')
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
