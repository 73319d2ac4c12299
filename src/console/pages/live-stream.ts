import { parseExactJson } from '../../client/json.js'
import { type Api, ApiError, must, type Schemas } from '../api.js'

export type Change = Schemas['Change']

/** Where the stream is, as the page says it in words. */
export type StreamState =
  | { kind: 'connecting' }
  /** `note`: what the person should know about the changes shown, when something may be missing. */
  | { kind: 'connected'; note?: string }
  /** Dropped or refused for a while: another try is on its way. */
  | { kind: 'reconnecting'; reason: string }
  /** Refused for a reason that waiting does not fix: the person decides what next. */
  | { kind: 'stopped'; reason: string; fromNow: boolean }

/** The first wait after a drop, doubled on each failed try up to the longest. */
const FIRST_WAIT_MS = 500
const LONGEST_WAIT_MS = 8000

/**
 * Follows GET /events/stream from a browser. An EventSource cannot send the token, so each connection
 * is opened with a fresh ticket (POST /events/tickets) in its URL. The EventSource's own reconnection
 * would reuse that ticket, which lasts a minute, and a new EventSource does not send the old one's
 * Last-Event-ID: so every error closes the source, and the follower opens a new one with a new ticket
 * and `after` set to the last change received, which the service resumes right after. Nothing is
 * missed or repeated across a drop.
 */
export class ChangeFollower {
  private source: EventSource | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  /** The current run (one per start); a late response of an earlier run finds it changed and does nothing. */
  private run: object | undefined
  private failures = 0
  /** The cursor of the last change received: where a new connection resumes. */
  private cursor: string | undefined
  /**
   * A connection dropped before any change came: with no cursor to resume from, the next one starts at
   * its own present, and what was made in between is not shown.
   */
  private gap = false

  constructor(
    private readonly api: Api,
    private readonly onChange: (change: Change) => void,
    private readonly onState: (state: StreamState) => void,
  ) {}

  /** Starts following after `after`, or from the present without it. */
  start(after?: string): void {
    this.stop()
    const run = {}
    this.run = run
    this.cursor = after
    this.gap = false
    this.failures = 0
    this.onState({ kind: 'connecting' })
    void this.connect(run)
  }

  /** Closes the stream for good (the page is left). */
  stop(): void {
    this.run = undefined
    clearTimeout(this.timer)
    this.timer = undefined
    this.source?.close()
    this.source = undefined
  }

  private async connect(run: object): Promise<void> {
    let ticket: string
    try {
      ticket = (await must(this.api.POST('/events/tickets'))).data.ticket
    } catch (cause) {
      if (this.run === run) this.refused(run, cause)
      return
    }
    if (this.run !== run) return
    const query = new URLSearchParams({ ticket })
    if (this.cursor !== undefined) query.set('after', this.cursor)
    const source = new EventSource(`/events/stream?${query}`)
    this.source = source
    let opened = false
    source.onopen = () => {
      opened = true
      this.failures = 0
      this.onState(
        this.gap
          ? {
              kind: 'connected',
              note: 'Changes made while the connection was down may be missing: it dropped before a first change came to resume after.',
            }
          : { kind: 'connected' },
      )
    }
    source.onmessage = (event: MessageEvent<string>) => {
      let change: Change
      try {
        change = parseExactJson(event.data) as Change
      } catch {
        // A change the page cannot read is passed over, never the stream's place in the order.
        this.cursor = event.lastEventId || this.cursor
        return
      }
      this.cursor = event.lastEventId || change.cursor
      this.onChange(change)
    }
    source.onerror = () => {
      source.close()
      if (this.source !== source || this.run !== run) return
      this.source = undefined
      if (opened && this.cursor === undefined) this.gap = true
      if (opened) this.retry(run, 'The connection dropped.')
      else void this.diagnose(run)
    }
  }

  /**
   * An EventSource refused before it opened tells no status. The feed refuses a cursor, a token and a
   * scope as the stream does, so one read of it says why: a 410 or 400 that no retry would change, or
   * nothing wrong, and the failure was the network's or a passing one (too many streams).
   */
  private async diagnose(run: object): Promise<void> {
    try {
      const query = this.cursor === undefined ? { limit: 1 } : { after: this.cursor, limit: 1 }
      await must(this.api.GET('/events', { params: { query } }))
    } catch (cause) {
      if (this.run === run) this.refused(run, cause)
      return
    }
    if (this.run === run) this.retry(run, 'The service did not open the stream.')
  }

  private refused(run: object, cause: unknown): void {
    const status = cause instanceof ApiError ? cause.status : 0
    const said = cause instanceof ApiError ? cause.message : String(cause)
    if (status === 410) {
      this.stopWith(
        'Changes after the last one shown are no longer kept by the service (past its retention), so some may be missing here. Follow from now to go on.',
      )
    } else if (status === 400) {
      this.stopWith(
        `The service no longer knows the last change shown (${said}), so some may be missing here. Follow from now to go on.`,
      )
    } else if (status === 401) {
      // The session signs the person out by itself; this is said in case the page is still shown.
      this.stopWith('Your token no longer works (expired or revoked): sign in again.', false)
    } else if (status === 403) {
      this.stopWith('Your token cannot follow the change feed: it lacks the events:read scope.', false)
    } else {
      this.retry(run, status === 0 ? 'The service does not respond.' : said)
    }
  }

  private stopWith(reason: string, fromNow = true): void {
    this.stop()
    this.onState({ kind: 'stopped', reason, fromNow })
  }

  private retry(run: object, reason: string): void {
    this.onState({ kind: 'reconnecting', reason })
    const longest = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** this.failures)
    this.failures += 1
    // Many pages dropped at once by one restart do not all come back in the same instant.
    const wait = longest / 2 + Math.random() * (longest / 2)
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.run === run) void this.connect(run)
    }, wait)
  }
}
