import type { FastifyBaseLogger } from 'fastify'
import type { LeaseStore } from '../store/types.js'

/** The lease row whose holder is the one process that fans events out and sends webhooks. */
export const DISPATCH_LEASE = 'webhook-dispatcher'

/** How often a process that does not hold the lease asks for it (at most). */
const STANDBY_ASK_MS = 1000

export interface DispatchLeaseOptions {
  store: LeaseStore
  /** This dispatcher's owner id, as it also marks the deliveries it leases. */
  holder: string
  /** How long the lease lasts unrenewed: how long a dead holder's duty waits for another process. */
  ttlMs: number
  logger: FastifyBaseLogger
  now: () => number
  /** Told when this process starts or stops holding the lease. */
  onChange?: (held: boolean) => void
}

/**
 * This process's side of the dispatcher lease. The holder renews it every third of its length, so
 * two renewals in a row may fail (a busy or briefly unreachable database) before it lapses; the
 * others ask every second (or every third of the length, if shorter), so a released lease is taken
 * within about a second, and a dead holder's within about that after it expires.
 *
 * The lease saves work, it does not make delivery safe: each delivery keeps its own lease, so two
 * processes that both believe they hold this one (a holder frozen past its expiry) still never send
 * one attempt twice at once.
 */
export class DispatchLease {
  /** Local time until which the lease is ours: the time the winning request was sent, plus the TTL. */
  private heldUntil = 0
  private reported = false
  private timer: NodeJS.Timeout | undefined
  private asking: Promise<void> | undefined
  private stopped = true

  constructor(private readonly options: DispatchLeaseOptions) {}

  held(): boolean {
    return this.heldUntil > this.options.now()
  }

  start(): void {
    this.stopped = false
    this.ask()
  }

  /** Stops asking and, if held, releases the lease so that another process takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.asking
    if (this.heldUntil === 0) return
    this.heldUntil = 0
    this.report()
    const { store, holder, logger } = this.options
    try {
      await store.release(DISPATCH_LEASE, holder)
      logger.info({ holder }, 'webhook dispatcher lease released')
    } catch (error) {
      // It expires by itself; another process takes over then.
      logger.warn({ err: error }, 'could not release the webhook dispatcher lease')
    }
  }

  private ask(): void {
    const { store, holder, ttlMs, logger, now } = this.options
    const sentAt = now()
    this.asking = store
      .acquire(DISPATCH_LEASE, holder, new Date(sentAt), ttlMs)
      .then(
        (got) => {
          this.heldUntil = got ? sentAt + ttlMs : 0
        },
        // Whatever was held stays held until it runs out; the next ask may succeed. A standby's
        // failures matter less, and would repeat every second through a database outage.
        (error: unknown) => {
          if (this.held()) logger.warn({ err: error }, 'could not renew the webhook dispatcher lease')
          else logger.debug({ err: error }, 'could not ask for the webhook dispatcher lease')
        },
      )
      .then(() => {
        this.asking = undefined
        this.report()
        if (this.stopped) return
        const renewMs = ttlMs / 3
        this.timer = setTimeout(() => this.ask(), this.held() ? renewMs : Math.min(STANDBY_ASK_MS, renewMs))
      })
  }

  private report(): void {
    const held = this.held()
    if (held === this.reported) return
    this.reported = held
    const { holder, logger } = this.options
    if (held) logger.info({ holder }, 'webhook dispatcher lease acquired: this process sends webhooks')
    else if (!this.stopped)
      logger.warn({ holder }, 'webhook dispatcher lease lost: this process stops sending webhooks')
    this.options.onChange?.(held)
  }
}
