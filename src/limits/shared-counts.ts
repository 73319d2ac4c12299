import { setNewest } from '../bounded-map.js'
import type { RateLimitStore, Settlement, WindowChange } from '../store/types.js'
import { type Count, type Counting, MAX_COUNTED_KEYS } from './counting.js'

/**
 * How often a process settles with the others: reports what it admitted beyond its reservations and
 * reserves or gives back allowance, for all its keys in one statement. Nothing is written per request.
 */
export const SETTLE_INTERVAL_MS = 100
/**
 * The shortest time between two settlements, for one that requests waiting on their process's
 * reserve ask for sooner than the interval: however many requests wait, they share a statement.
 */
const SETTLE_SPACING_MS = 20
/** A settlement still without a response after this long: the process counts alone until one succeeds. */
export const ALONE_AFTER_MS = 1000
/** A process holds this many intervals' worth of a key's recent requests in reserve. */
const INTERVALS_AHEAD = 2
/**
 * Of a limit, the part a process may admit in a window before its first settlement of that window
 * has reserved anything for it (at least one request): a client's first requests do not wait for a
 * round trip. Admitted unreserved, it is what a limit may be exceeded by, per other process.
 */
const UNRESERVED_PART = 100
/** A later settlement that puts the database's clock back by less than this is taken for jitter. */
const CLOCK_JITTER_MS = 1000
/** Retry-After for a request refused while allowance may still come free: the smallest there is. */
const RETRY_SOON_MS = 1000

const unreservedAllowance = (max: number) => Math.max(1, Math.floor(max / UNRESERVED_PART))

interface Window {
  key: string
  windowMs: number
  /** On the database's clock, a multiple of windowMs: the same window on every process. */
  start: number
  max: number
  /** Allowance reserved for this process in the window, used or not (its settled overdraft included). */
  held: number
  /** Requests admitted here in the window. */
  used: number
  /** Requests, admitted or not, since the last settlement that included the window. */
  demand: number
  /** Whether a settlement of the window has succeeded: until then up to unreservedAllowance is admitted. */
  settled: boolean
  /** What no process held at the last settlement. */
  unreserved: number
  /** Requests waiting for the next settlement to reserve them allowance. */
  waiting: Array<(count: Count) => void>
}

interface Sent {
  window: Window
  overdraft: number
  requested: number
  /** The requests that waited for this settlement: decided once it ends. */
  waiting: Array<(count: Count) => void>
}

export interface SharedCountsOptions {
  /** Told when a settlement fails after one succeeded (or none had yet): the process counts alone. */
  onAlone?: (error: unknown) => void
  /** Told when a settlement succeeds after failing: the process counts with the others again. */
  onShared?: () => void
}

/**
 * Counts shared by every process on one database, so that a limit holds across instances and workers
 * instead of once per process. A process admits requests against allowance it reserved in the
 * database beforehand, so the processes between them admit no more than the limit (but for the small
 * unreserved part below), however the requests are spread over them, all to one or round robin.
 * Reserving happens in settlements: one statement, for every key that needs it, each interval, or
 * sooner when requests wait, never one per request:
 * - a process reserves what its recent requests suggest it needs for the next intervals, as far as
 *   the limit leaves any, and gives back what it holds beyond that, so allowance follows the requests
 *   to whichever process they go to within an interval or two;
 * - a request that finds its process's reserve spent while the limit has allowance no process holds
 *   waits for the next settlement (a round trip, soon after it arrives) instead of being refused; one
 *   is refused at once only when every bit of the window's allowance is reserved;
 * - before its first settlement of a window a process admits a small part of the limit unreserved
 *   (settled next time, counted whatever the limit): a new window or a new key does not wait, and the
 *   limit is exceeded by at most that part per process;
 * - a process that stops gives back what it holds; what one that dies held is lost to that window,
 *   and the next starts afresh.
 * Windows are aligned on the database's clock, so that the processes agree on them, and timed between
 * settlements on the monotonic clock, so that a step of the host's clock moves none.
 * While settlements fail (the database is unreachable) or hang, the process counts alone, up to the
 * whole limit, as if it were the only one, rather than refusing or failing requests; what it admitted
 * meanwhile is settled once the database responds again.
 *
 * Why reservations: a process that admitted a share of what was left at its last settlement (left
 * over the live processes) would count on a total that misses what the others admitted since their
 * own, so the shares of processes settling at different moments overlap, and a burst spread over
 * them passes the limit by a good part of it. A fixed share of the limit per live process does not
 * overlap, but holds a client whose requests all reach one process to that share. A reservation is
 * taken out of the window by the statement that holds its row, so reservations never overlap,
 * whatever the timing, and one process can hold all of the window when it alone is asked.
 */
export class SharedCounts implements Counting {
  /** In the order last counted, so the first is the one counted longest ago. */
  private readonly windows = new Map<string, Window>()
  /** Windows counted since the last settlement, or that it left to give back or ask more for. */
  private touched = new Set<Window>()
  /** The database's clock less the monotonic clock; the host's wall clock until a settlement tells. */
  private offset = Date.now() - performance.now()
  /** When the settlement in flight was sent (monotonic), if one is. */
  private settling: number | undefined
  /** What the settlement in flight carries. */
  private inFlight: Sent[] = []
  private lastSent = Number.NEGATIVE_INFINITY
  private failing = false
  private readonly timer: NodeJS.Timeout
  private soon: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly store: RateLimitStore,
    private readonly options: SharedCountsOptions = {},
  ) {
    this.timer = setInterval(() => this.tick(), SETTLE_INTERVAL_MS)
    this.timer.unref()
  }

  /** Whether the process counts alone: settlements fail, or the one in flight takes too long. */
  get alone(): boolean {
    return this.failing || (this.settling !== undefined && performance.now() - this.settling > ALONE_AFTER_MS)
  }

  count(key: string, windowMs: number, max: number): Count | Promise<Count> {
    const now = this.now()
    const start = Math.floor(now / windowMs) * windowMs
    let window = this.windows.get(key)
    if (window === undefined || window.start !== start || window.windowMs !== windowMs) {
      window = {
        key,
        windowMs,
        start,
        max,
        held: 0,
        used: 0,
        demand: 0,
        settled: false,
        unreserved: max,
        waiting: [],
      }
    }
    setNewest(this.windows, key, window, MAX_COUNTED_KEYS)
    window.max = max
    window.demand += 1
    this.touched.add(window)
    if (!this.closed && !this.alone && !this.admits(window) && this.mayGetMore(window)) {
      const waiting = new Promise<Count>((resolve) => window.waiting.push(resolve))
      this.settleSoon()
      return waiting
    }
    return this.decide(window, now)
  }

  giveBack(key: string): void {
    const window = this.windows.get(key)
    if (!window || window.used === 0) return
    if (window.start + window.windowMs > this.now()) window.used -= 1
  }

  /**
   * Stops settling, and gives back what the process holds in windows still running, so that the
   * others may use it: a process that stops (a rolling restart) takes nothing with it. Waits for that
   * at most as long as a settlement may take before the process would count alone.
   */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    clearTimeout(this.soon)
    this.releaseWaiting()
    if (this.settling !== undefined || this.alone) return
    const now = this.now()
    const changes: WindowChange[] = []
    for (const window of this.windows.values()) {
      if (window.start + window.windowMs <= now) continue
      const overdraft = Math.max(0, window.used - window.held)
      const spare = Math.max(0, window.held - window.used)
      if (overdraft > 0 || spare > 0)
        changes.push(change({ window, overdraft, requested: -spare, waiting: [] }))
    }
    if (changes.length === 0) return
    let timer: NodeJS.Timeout | undefined
    const gaveUp = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ALONE_AFTER_MS)
    })
    // Best effort: what is not given back is lost to its window only.
    await Promise.race([
      this.store.settle(changes).then(
        () => {},
        () => {},
      ),
      gaveUp,
    ])
    clearTimeout(timer)
  }

  /** Now on the database's clock, as the last settlement told it, timed since on the monotonic clock. */
  private now(): number {
    return performance.now() + this.offset
  }

  private admits(window: Window): boolean {
    if (window.used < window.held) return true
    return !window.settled && window.used < unreservedAllowance(window.max)
  }

  /** Whether a settlement may reserve this process more of the window. */
  private mayGetMore(window: Window): boolean {
    return !window.settled || window.unreserved > 0
  }

  /** Admits or refuses a request counted against `window`, as things stand. */
  private decide(window: Window, now = this.now()): Count {
    const ttl = window.start + window.windowMs - now
    const alone = this.alone
    if (alone ? window.used < window.max : this.admits(window)) {
      window.used += 1
      return { current: window.max - this.remaining(window, alone), ttl }
    }
    const retrySoon = !alone && this.mayGetMore(window)
    return { current: window.max + 1, ttl: retrySoon ? Math.min(ttl, RETRY_SOON_MS) : ttl }
  }

  /** What this process can tell is left of the limit: what no process holds, and its own reserve. */
  private remaining(window: Window, alone: boolean): number {
    const own = window.max - window.used
    if (alone) return own
    return Math.min(own, Math.max(0, window.unreserved) + Math.max(0, window.held - window.used))
  }

  private tick(): void {
    // A settlement that hangs must not hold up the requests waiting for it: they are counted alone.
    if (this.alone) this.releaseWaiting()
    void this.settle()
  }

  private releaseWaiting(): void {
    for (const { window, waiting } of this.inFlight) {
      for (const resolve of waiting.splice(0)) resolve(this.decide(window))
    }
    for (const window of this.windows.values()) {
      for (const resolve of window.waiting.splice(0)) resolve(this.decide(window))
    }
  }

  /** A settlement as soon as the spacing allows, for requests that wait for it. */
  private settleSoon(): void {
    if (this.soon !== undefined || this.settling !== undefined || this.closed) return
    const wait = Math.max(0, this.lastSent + SETTLE_SPACING_MS - performance.now())
    this.soon = setTimeout(() => {
      this.soon = undefined
      void this.settle()
    }, wait)
  }

  /** One settlement for every window that needs one; skipped while the last is still in flight. */
  async settle(): Promise<void> {
    if (this.settling !== undefined || this.touched.size === 0 || this.closed) return
    const now = this.now()
    const sent: Sent[] = []
    const touched = this.touched
    this.touched = new Set()
    for (const window of touched) {
      if (window.start + window.windowMs <= now || this.windows.get(window.key) !== window) {
        // Ended, or forgotten for others: nothing is left to settle. Who waited is counted afresh.
        for (const resolve of window.waiting.splice(0)) {
          const counted = this.count(window.key, window.windowMs, window.max)
          if (counted instanceof Promise) counted.then(resolve)
          else resolve(counted)
        }
        continue
      }
      const overdraft = Math.max(0, window.used - window.held)
      window.held += overdraft
      const target = Math.max(unreservedAllowance(window.max), Math.ceil(window.demand * INTERVALS_AHEAD))
      let requested = target - (window.held - window.used)
      // Nothing is left to reserve and nothing asks for it: asking again would only cost a statement.
      if (requested > 0 && window.settled && window.unreserved <= 0 && window.demand === 0) requested = 0
      // What is given back is no longer admitted against from now on.
      if (requested < 0) window.held += requested
      window.demand = 0
      const waiting = window.waiting.splice(0)
      if (overdraft !== 0 || requested !== 0) sent.push({ window, overdraft, requested, waiting })
      else for (const resolve of waiting) resolve(this.decide(window))
    }
    if (sent.length === 0) return
    const began = performance.now()
    this.settling = began
    this.lastSent = began
    this.inFlight = sent
    let settlement: Settlement
    try {
      settlement = await this.store.settle(sent.map(change))
    } catch (error) {
      this.settling = undefined
      this.inFlight = []
      // Nothing was settled: the overdraft is still to report, and what was given back is still held.
      for (const { window, overdraft, requested } of sent) {
        window.held -= overdraft + Math.min(0, requested)
        this.touched.add(window)
      }
      if (!this.failing) {
        this.failing = true
        this.options.onAlone?.(error)
      }
      for (const { window, waiting } of sent) for (const resolve of waiting) resolve(this.decide(window))
      return
    }
    this.settling = undefined
    this.inFlight = []
    this.calibrate(settlement.now - (began + performance.now()) / 2)
    if (this.failing) {
      this.failing = false
      this.options.onShared?.()
    }
    sent.forEach(({ window, requested, waiting }, i) => {
      const grant = settlement.grants[i]
      if (grant) {
        if (requested > 0) window.held += grant.granted
        window.unreserved = grant.unreserved
        window.settled = true
      }
      // Settled again next time: to give back what it no longer needs, or to ask for more.
      this.touched.add(window)
      for (const resolve of waiting) resolve(this.decide(window))
    })
    if (this.windowsWaiting()) this.settleSoon()
  }

  private windowsWaiting(): boolean {
    for (const window of this.touched) if (window.waiting.length > 0) return true
    return false
  }

  /**
   * Takes the database's clock from a settlement. Small steps back are jitter of the round trip and
   * ignored, so that the clock never runs back over a window boundary for them; a larger step (the
   * database's clock was set back) is followed, and windows start again from it. The first
   * settlement is no exception: a host clock a little ahead of the database's stays, for the window
   * the process counted in just past a boundary holds allowance it would forget if the clock ran back
   * into the window before, and no longer see when it came forward again.
   */
  private calibrate(offset: number): void {
    if (offset > this.offset || this.offset - offset > CLOCK_JITTER_MS) this.offset = offset
  }
}

function change({ window, overdraft, requested }: Sent): WindowChange {
  return {
    key: window.key,
    windowMs: window.windowMs,
    start: window.start,
    max: window.max,
    overdraft,
    requested,
  }
}
