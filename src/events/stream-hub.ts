import { AppError, errors } from '../errors.js'
import type { ChangeRecord, EventStore } from '../store/types.js'
import { changeJson, cursorOf } from './change.js'

/** Why a stream ended; the label of plantstore_event_stream_ends_total. */
export type StreamEndReason = 'client' | 'backlog' | 'revoked' | 'expired' | 'draining' | 'error'

/** Where a stream's bytes go: the response of one GET /events/stream. */
export interface StreamSink {
  write(chunk: Buffer): void
  /** Bytes written and not yet handed to the client's connection. */
  backlog(): number
  /** Settles once most of the backlog has been sent (or the stream has closed). */
  drained(): Promise<void>
  /** Ends the response: at once for a backlog (its bytes would only wait longer), else after what was written. */
  close(reason: StreamEndReason): void
}

/** What a stream was opened with, checked again while it is open. */
export interface StreamCredential {
  /** Streams opened with the same credential are checked together, once per check. */
  key: string
  /** When it stops being accepted (ms since the epoch); null: never. */
  expiresAt: number | null
  /** Throws (or rejects with) the 401 AppError of a credential no longer accepted. */
  check(): void | Promise<void>
}

export interface StreamHubOptions {
  events: EventStore
  maxStreams: number
  /** Whether the instance is draining: its streams end so that clients reconnect elsewhere. */
  draining: () => boolean
  onOpen?: () => void
  onEnd?: (reason: StreamEndReason) => void
  /** A read or check that failed for a reason other than the client's (the database, say). */
  onError?: (error: unknown) => void
  heartbeatMs?: number
  /** How often credentials, expiries and draining are looked at. */
  checkMs?: number
  /** Reads without a wake-up, in case one was lost (a dropped LISTEN connection). */
  pollMs?: number
  /** How long a wake-up waits for others to join it before the shared read; 0: none. */
  gatherMs?: number
  backlogBytes?: number
  now?: () => number
}

/** Every 15 s, so that proxies and clients that time out idle connections keep the stream. */
export const HEARTBEAT_MS = 15_000
/** Within the revocation bound (docs/tokens.md): a revoked token's stream ends a second after the store says so. */
const CHECK_MS = 1000
const POLL_MS = 2000
/**
 * The wake-ups of this long are gathered into one shared read and one write per stream. A busy
 * writer commits many small batches a second, and a write to every stream for each of them costs
 * the event loop a system call per stream per batch; a change reaches its readers this much later.
 */
export const GATHER_MS = 20
/**
 * Bytes a stream may have waiting for its client before it is ended: a reader that falls this far
 * behind resumes from its last id, and the server holds no more than this and one read's changes for it.
 */
export const BACKLOG_BYTES = 512 * 1024
/** Changes per read: a page of the largest changes is well below the backlog bound. */
const PAGE = 200

const HEARTBEAT = Buffer.from(': heartbeat\n\n')

/** One open stream. `position`: the seq of the last change it was given (or started after). */
interface Stream {
  sink: StreamSink
  credential: StreamCredential
  position: number
  live: boolean
  ended: boolean
}

/**
 * The change streams of one process. Streams that are caught up share one read of the store per
 * wake-up, and each change's text is made once for all of them; a stream that resumes from an older
 * cursor catches up with reads of its own, then joins them.
 */
export class StreamHub {
  private readonly streams = new Set<Stream>()
  private readonly live = new Set<Stream>()
  /** Where the shared reads resume; undefined while no stream is live (the hub does not read then). */
  private position: number | undefined
  private reading = false
  private rung = false
  /** The wait for wake-ups to gather before the next shared read. */
  private gathering: NodeJS.Timeout | undefined
  /** The newest change, being found for streams that start at the present. */
  private finding: Promise<number> | undefined
  private readonly checking = new Set<string>()
  private unwatch: (() => void) | undefined
  private timers: NodeJS.Timeout[] = []
  private readonly events: EventStore
  private readonly heartbeatMs: number
  private readonly checkMs: number
  private readonly pollMs: number
  private readonly gatherMs: number
  private readonly backlogBytes: number
  private readonly now: () => number

  constructor(private readonly options: StreamHubOptions) {
    this.events = options.events
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS
    this.checkMs = options.checkMs ?? CHECK_MS
    this.pollMs = options.pollMs ?? POLL_MS
    this.gatherMs = options.gatherMs ?? GATHER_MS
    this.backlogBytes = options.backlogBytes ?? BACKLOG_BYTES
    this.now = options.now ?? Date.now
  }

  /** How many streams are open. */
  get size(): number {
    return this.streams.size
  }

  /** Whether another stream would pass --max-streams. */
  full(): boolean {
    return this.streams.size >= this.options.maxStreams
  }

  /**
   * Starts a stream with the changes after `afterSeq`, or with those to come when it is undefined.
   * Returns the function that ends it because its client went away.
   */
  open(sink: StreamSink, credential: StreamCredential, afterSeq: number | undefined): () => void {
    const stream: Stream = { sink, credential, position: afterSeq ?? 0, live: false, ended: false }
    this.streams.add(stream)
    this.options.onOpen?.()
    if (this.streams.size === 1) this.start()
    if (this.options.draining()) this.end(stream, 'draining')
    else if (afterSeq === undefined) void this.joinAtPresent(stream)
    else void this.catchUp(stream)
    return () => this.end(stream, 'client')
  }

  /** Ends every stream (the app is closing). */
  close(): void {
    for (const stream of this.streams) this.end(stream, 'draining')
  }

  private start(): void {
    this.unwatch = this.events.watchChanges(this.wake)
    this.timers = [
      setInterval(() => this.heartbeat(), this.heartbeatMs),
      setInterval(() => this.check(), this.checkMs),
      setInterval(this.wake, this.pollMs),
    ]
    for (const timer of this.timers) timer.unref()
  }

  private stop(): void {
    this.unwatch?.()
    this.unwatch = undefined
    for (const timer of this.timers) clearInterval(timer)
    this.timers = []
    clearTimeout(this.gathering)
    this.gathering = undefined
  }

  private end(stream: Stream, reason: StreamEndReason): void {
    if (stream.ended) return
    stream.ended = true
    this.streams.delete(stream)
    this.live.delete(stream)
    // With none live the hub stops reading: its position would go stale, and a stream starting at
    // the present later must not be given what happened meanwhile.
    if (this.live.size === 0 && !this.reading) this.position = undefined
    if (this.streams.size === 0) this.stop()
    this.options.onEnd?.(reason)
    stream.sink.close(reason)
  }

  private async joinAtPresent(stream: Stream): Promise<void> {
    try {
      if (this.position === undefined) {
        this.finding ??= newestChange(this.events).finally(() => {
          this.finding = undefined
        })
        const newest = await this.finding
        // Gone meanwhile, it leaves no position behind: nobody would keep it current.
        if (stream.ended) return
        // Another stream may have set the position meanwhile; it is at least as new.
        this.position ??= newest
      }
      if (stream.ended) return
      stream.position = this.position
      this.join(stream)
    } catch (error) {
      this.fail(stream, error)
    }
  }

  /** Reads the stream's own pages until it has reached the shared reads, then joins them. */
  private async catchUp(stream: Stream): Promise<void> {
    try {
      for (;;) {
        const page = await this.events.changes({ afterSeq: stream.position, limit: PAGE })
        if (stream.ended) return
        this.send(stream, page.changes, 0, render(page.changes))
        if (stream.ended) return
        stream.position = Math.max(stream.position, page.lastSeq)
        if (!page.reachedEnd) {
          // Its own reads go at its client's pace: one that resumes far back is not cut off for
          // the backlog its catching up would otherwise pile up.
          await stream.sink.drained()
          if (stream.ended) return
          continue
        }
        // A read that saw everything committed is as good a start for the shared reads as any.
        this.position ??= stream.position
        if (stream.position >= this.position) {
          this.join(stream)
          return
        }
      }
    } catch (error) {
      this.fail(stream, error)
    }
  }

  private join(stream: Stream): void {
    stream.live = true
    this.live.add(stream)
    // Changes committed while it caught up may have rung before it joined.
    this.wake()
  }

  private fail(stream: Stream, error: unknown): void {
    if (stream.ended) return
    this.options.onError?.(error)
    this.end(stream, 'error')
  }

  /**
   * Rung after commits, and by the poll: one read at a time, after the wake-ups of GATHER_MS have
   * gathered, and one more if rung during it.
   */
  private readonly wake = (): void => {
    if (this.live.size === 0 || this.position === undefined) return
    if (this.reading) {
      this.rung = true
      return
    }
    if (this.gathering !== undefined) return
    if (this.gatherMs === 0) {
      void this.read()
      return
    }
    this.gathering = setTimeout(() => {
      this.gathering = undefined
      void this.read()
    }, this.gatherMs)
  }

  private async read(): Promise<void> {
    this.reading = true
    this.rung = false
    try {
      for (;;) {
        const afterSeq = this.position
        if (afterSeq === undefined) break
        const page = await this.events.changes({ afterSeq, limit: PAGE })
        if (this.live.size === 0) break
        this.position = Math.max(afterSeq, page.lastSeq)
        if (page.changes.length > 0) this.deliver(page.changes)
        if (page.reachedEnd) break
        // The connections send what they were given before the next page is added to it.
        await new Promise((resolve) => setImmediate(resolve))
        if (this.live.size === 0) break
      }
    } catch (error) {
      // The next ring or poll reads again from the same place.
      this.options.onError?.(error)
    } finally {
      this.reading = false
      if (this.live.size === 0) this.position = undefined
      else if (this.rung) this.wake()
    }
  }

  /** Writes each change, made into text once, to every live stream that has not had it. */
  private deliver(changes: ChangeRecord[]): void {
    const rendered = render(changes)
    for (const stream of this.live) {
      let first = 0
      while (first < changes.length && (changes[first] as ChangeRecord).seq <= stream.position) first++
      this.send(stream, changes, first, rendered)
    }
  }

  private send(stream: Stream, changes: ChangeRecord[], first: number, rendered: Rendered): void {
    if (first >= changes.length) return
    stream.position = (changes[changes.length - 1] as ChangeRecord).seq
    this.write(stream, first === 0 ? rendered.text : rendered.text.subarray(rendered.offsets[first]))
  }

  /**
   * Writes unless what the stream already holds is past the bound: then it ends instead. Checked
   * before the write, so that one burst of changes (a page) to a reader that keeps up is no backlog;
   * a stream holds at most the bound and a page.
   */
  private write(stream: Stream, chunk: Buffer): void {
    if (stream.sink.backlog() > this.backlogBytes) this.end(stream, 'backlog')
    else stream.sink.write(chunk)
  }

  private heartbeat(): void {
    for (const stream of this.streams) this.write(stream, HEARTBEAT)
  }

  /** Ends the streams of a draining instance, and those whose credential has expired or been revoked. */
  private check(): void {
    const draining = this.options.draining()
    const now = this.now()
    const byCredential = new Map<string, Stream[]>()
    for (const stream of this.streams) {
      const { credential } = stream
      if (draining) this.end(stream, 'draining')
      else if (credential.expiresAt !== null && credential.expiresAt <= now) this.end(stream, 'expired')
      else {
        const group = byCredential.get(credential.key)
        if (group) group.push(stream)
        else byCredential.set(credential.key, [stream])
      }
    }
    for (const [key, group] of byCredential) {
      // A check still waiting for the store is not started again.
      if (this.checking.has(key)) continue
      let pending: void | Promise<void>
      try {
        pending = (group[0] as Stream).credential.check()
      } catch (error) {
        this.refused(group, error)
        continue
      }
      if (!pending) continue
      this.checking.add(key)
      pending.catch((error: unknown) => this.refused(group, error)).finally(() => this.checking.delete(key))
    }
  }

  private refused(group: Stream[], error: unknown): void {
    // The store (or the identity provider) could not say: the stream goes on and the next check asks
    // again. Requests report such an outage; a line per stream per check would only repeat it.
    if (!(error instanceof AppError)) return
    const expired = error.entry === errors.TOKEN_EXPIRED || error.entry === errors.TICKET_EXPIRED
    for (const stream of group) this.end(stream, expired ? 'expired' : 'revoked')
  }
}

interface Rendered {
  text: Buffer
  /** Where each change's event starts in `text`. */
  offsets: number[]
}

/** The changes as SSE events, `id:` the cursor and `data:` the change, in one buffer. */
function render(changes: ChangeRecord[]): Rendered {
  const offsets: number[] = []
  let at = 0
  const parts = changes.map((change) => {
    const event = `id: ${cursorOf(change.seq)}\ndata: ${changeJson(change)}\n\n`
    offsets.push(at)
    at += Buffer.byteLength(event)
    return event
  })
  return { text: Buffer.from(parts.join('')), offsets }
}

/** Where the feed stands now, for a stream that starts at the present: a read of no change. */
export async function newestChange(events: EventStore): Promise<number> {
  return (await events.changes({ afterSeq: 0, limit: 0 })).lastSeq
}
