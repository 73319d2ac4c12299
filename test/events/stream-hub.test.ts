import { afterEach, describe, expect, it } from 'vitest'
import { AppError, errors } from '../../src/errors.js'
import {
  newestChange,
  type StreamCredential,
  type StreamEndReason,
  StreamHub,
  type StreamSink,
} from '../../src/events/stream-hub.js'
import { pageOf, scanEnd } from '../../src/store/change-row.js'
import type { ChangePage, ChangeQuery, ChangeRecord, EventStore } from '../../src/store/types.js'

/** An outbox in memory: plant changes at the seqs given, other events (not changes) in between. */
class FakeEvents implements EventStore {
  readonly seqs: number[] = []
  top = 0
  reads = 0
  /** While set, each read waits for it. */
  gate: Promise<void> | undefined
  /** Reads from this seq wait for its promise. */
  readonly gateAfter = new Map<number, Promise<void>>()
  /** While set, each read fails with it (the database is unreachable). */
  failure: Error | undefined
  private readonly listeners = new Set<() => void>()

  commit(count: number, { gap = 0, ring = true } = {}): void {
    for (let i = 0; i < count; i++) {
      this.top += 1 + gap
      this.seqs.push(this.top)
    }
    if (ring) for (const listener of this.listeners) listener()
  }

  async changes(query: ChangeQuery): Promise<ChangePage> {
    this.reads++
    if (this.failure) throw this.failure
    // What the read sees is taken when it starts, as a database snapshot is.
    const end = scanEnd(query.afterSeq)
    const seen = this.seqs.filter((seq) => seq > query.afterSeq && seq <= end).slice(0, query.limit)
    const top = this.top
    if (this.gate) await this.gate
    const gated = this.gateAfter.get(query.afterSeq)
    if (gated) await gated
    return pageOf(seen.map(change), query, top)
  }

  watchChanges(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  get watching(): number {
    return this.listeners.size
  }

  listSince = async () => []
  history = async () => []
  retentionHorizon = async () => 0
}

function change(seq: number): ChangeRecord {
  return {
    seq,
    type: 'plant.created',
    time: new Date(0),
    actor: null,
    requestId: null,
    before: null,
    after: `{"id":${seq},"name":"p"}`,
  }
}

class FakeSink implements StreamSink {
  text = ''
  held = 0
  ended: StreamEndReason | undefined
  writes = 0
  write(chunk: Buffer): void {
    this.writes++
    this.text += chunk.toString()
  }
  backlog(): number {
    return this.held
  }
  async drained(): Promise<void> {}
  close(reason: StreamEndReason): void {
    this.ended = reason
  }
  ids(): number[] {
    return [...this.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
  }
}

const always: StreamCredential = { key: 'k', expiresAt: null, check: () => {} }
const hubs: StreamHub[] = []
afterEach(() => {
  for (const hub of hubs.splice(0)) hub.close()
})

function hubOf(events: FakeEvents, options: Partial<ConstructorParameters<typeof StreamHub>[0]> = {}) {
  const ends: StreamEndReason[] = []
  const hub = new StreamHub({
    events,
    maxStreams: 100,
    draining: () => false,
    onEnd: (reason) => ends.push(reason),
    heartbeatMs: 60_000,
    checkMs: 60_000,
    pollMs: 60_000,
    // Reads at once, so that each test says when they happen; gathering has a test of its own.
    gatherMs: 0,
    ...options,
  })
  hubs.push(hub)
  return { hub, ends }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('newestChange', () => {
  it.each([
    ['no change at all', [], 0, 0],
    ['one change', [7], 7, 7],
    ['an event that is no change (a webhook test) after the newest change', [1, 2], 5, 5],
  ])('of %s is where the feed stands, in one read', async (_what, seqs, top, newest) => {
    const events = new FakeEvents()
    events.seqs.push(...seqs)
    events.top = top
    expect(await newestChange(events)).toBe(newest)
    expect(events.reads).toBe(1)
  })
})

describe('the stream hub', () => {
  it('gives streams at the present only later changes, with one read per wake-up for all of them', async () => {
    const events = new FakeEvents()
    events.commit(5)
    const { hub } = hubOf(events)
    const sinks = Array.from({ length: 10 }, () => new FakeSink())
    for (const sink of sinks) hub.open(sink, always, undefined)
    await settle()
    const before = events.reads
    events.commit(3)
    await settle()
    expect(events.reads - before).toBe(1)
    for (const sink of sinks) expect(sink.ids()).toEqual([6, 7, 8])
  })

  it('keeps no position for a stream that left while the present was being found', async () => {
    const events = new FakeEvents()
    events.commit(3)
    const { hub } = hubOf(events)
    const leaving = new FakeSink()
    const stop = hub.open(leaving, always, undefined)
    stop()
    await settle()
    events.commit(4)
    const later = new FakeSink()
    hub.open(later, always, undefined)
    await settle()
    events.commit(1)
    await settle()
    // Only what came after it opened, not what came after the one that left.
    expect(later.ids()).toEqual([8])
  })

  it('reads once more, not once per ring, for rings that come while a read is under way', async () => {
    const events = new FakeEvents()
    const { hub } = hubOf(events)
    const sink = new FakeSink()
    hub.open(sink, always, undefined)
    await settle()
    let open: () => void = () => {}
    events.gate = new Promise((resolve) => {
      open = resolve
    })
    const before = events.reads
    events.commit(1)
    for (let i = 0; i < 5; i++) events.commit(1)
    events.gate = undefined
    open()
    await settle()
    expect(events.reads - before).toBe(2)
    expect(sink.ids()).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('gathers the wake-ups of gatherMs into one shared read and one write to each stream', async () => {
    const events = new FakeEvents()
    const { hub } = hubOf(events, { gatherMs: 50 })
    const sinks = [new FakeSink(), new FakeSink()]
    for (const sink of sinks) hub.open(sink, always, undefined)
    await settle()
    const before = events.reads
    for (let i = 0; i < 6; i++) events.commit(1)
    expect(events.reads - before).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(events.reads - before).toBe(1)
    for (const sink of sinks) {
      expect(sink.ids()).toEqual([1, 2, 3, 4, 5, 6])
      expect(sink.writes).toBe(1)
    }
  })

  it('keeps its live streams through a shared read that fails, and reads on from the same place', async () => {
    const events = new FakeEvents()
    const errors: unknown[] = []
    const { hub, ends } = hubOf(events, { onError: (error) => errors.push(error) })
    const sink = new FakeSink()
    hub.open(sink, always, undefined)
    await settle()
    events.failure = new Error('connection refused')
    events.commit(2)
    await settle()
    expect(errors).toEqual([events.failure])
    expect(sink.ended).toBeUndefined()
    events.failure = undefined
    events.commit(1)
    await settle()
    expect(sink.ids()).toEqual([1, 2, 3])
    expect(ends).toEqual([])
  })

  it('ends a resuming stream whose own read fails, as an error its client resumes from', async () => {
    const events = new FakeEvents()
    events.commit(5)
    const errors: unknown[] = []
    const { hub, ends } = hubOf(events, { onError: (error) => errors.push(error) })
    events.failure = new Error('connection refused')
    const sink = new FakeSink()
    hub.open(sink, always, 2)
    await settle()
    expect(sink.ended).toBe('error')
    expect(ends).toEqual(['error'])
    expect(errors).toEqual([events.failure])
    expect(hub.size).toBe(0)
  })

  it('catches a resuming stream up with reads of its own, then joins it: every change once, in order', async () => {
    const events = new FakeEvents()
    events.commit(700, { gap: 1 })
    const { hub } = hubOf(events)
    const live = new FakeSink()
    hub.open(live, always, undefined)
    await settle()
    const resuming = new FakeSink()
    hub.open(resuming, always, 10)
    // Changes keep coming while it catches up.
    for (let i = 0; i < 20; i++) {
      events.commit(7)
      await new Promise((resolve) => setImmediate(resolve))
    }
    await settle()
    const expected = events.seqs.filter((seq) => seq > 10)
    expect(resuming.ids()).toEqual(expected)
    expect(live.ids()).toEqual(events.seqs.slice(700))
  })

  it('gives a stream that caught up past the shared read none of that read’s changes again', async () => {
    const events = new FakeEvents()
    events.commit(5)
    const { hub } = hubOf(events)
    const live = new FakeSink()
    hub.open(live, always, undefined)
    await settle()
    // The shared read from 5 sees 6 to 8 and is held; the resuming stream reads them itself meanwhile.
    let release: () => void = () => {}
    events.gateAfter.set(
      5,
      new Promise((resolve) => {
        release = resolve
      }),
    )
    events.commit(3)
    const resuming = new FakeSink()
    hub.open(resuming, always, 2)
    await settle()
    expect(resuming.ids()).toEqual([3, 4, 5, 6, 7, 8])
    release()
    await settle()
    events.commit(1)
    await settle()
    expect(resuming.ids()).toEqual([3, 4, 5, 6, 7, 8, 9])
    expect(live.ids()).toEqual([6, 7, 8, 9])
  })

  it('ends a stream whose backlog passes the bound, and only that one', async () => {
    const events = new FakeEvents()
    const { hub, ends } = hubOf(events, { backlogBytes: 100 })
    const slow = new FakeSink()
    const fast = new FakeSink()
    hub.open(slow, always, undefined)
    hub.open(fast, always, undefined)
    await settle()
    // A burst larger than the bound is sent to a reader that holds nothing.
    events.commit(10)
    await settle()
    expect(slow.ids()).toHaveLength(10)
    slow.held = 101
    events.commit(1)
    await settle()
    expect(slow.ended).toBe('backlog')
    expect(slow.ids()).toHaveLength(10)
    expect(fast.ended).toBeUndefined()
    expect(ends).toEqual(['backlog'])
    events.commit(1)
    await settle()
    expect(fast.ids()).toHaveLength(12)
  })

  it('ends the streams of a refused credential, keeps them when the store cannot say, and stops when none is left', async () => {
    const events = new FakeEvents()
    let refusal: Error | undefined
    const credential: StreamCredential = {
      key: 'token',
      expiresAt: null,
      check: () => (refusal ? Promise.reject(refusal) : undefined),
    }
    let checks = 0
    const counted: StreamCredential = {
      ...credential,
      check: () => {
        checks++
        return credential.check()
      },
    }
    const { hub, ends } = hubOf(events, { checkMs: 10 })
    const sinks = [new FakeSink(), new FakeSink()]
    for (const sink of sinks) hub.open(sink, counted, undefined)
    hub.open(new FakeSink(), always, undefined)
    refusal = new Error('database unreachable')
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(ends).toEqual([])
    // Checked more than once, once per check for both streams of the credential.
    expect(checks).toBeGreaterThan(1)
    refusal = new AppError(errors.TOKEN_REVOKED)
    await settle()
    expect(sinks.map((sink) => sink.ended)).toEqual(['revoked', 'revoked'])
    expect(hub.size).toBe(1)
    hub.close()
    expect(ends).toEqual(['revoked', 'revoked', 'draining'])
    expect(events.watching).toBe(0)
  })

  it('ends a stream at its credential’s expiry, and every stream once the instance drains', async () => {
    let now = 1000
    let draining = false
    const events = new FakeEvents()
    const { hub, ends } = hubOf(events, { checkMs: 10, now: () => now, draining: () => draining })
    const expiring = new FakeSink()
    hub.open(expiring, { key: 'jwt', expiresAt: 2000, check: () => {} }, undefined)
    const other = new FakeSink()
    hub.open(other, always, undefined)
    await settle()
    expect(ends).toEqual([])
    now = 2000
    await settle()
    expect(expiring.ended).toBe('expired')
    draining = true
    await settle()
    expect(other.ended).toBe('draining')
    // One opened while draining ends at once.
    const late = new FakeSink()
    hub.open(late, always, undefined)
    expect(late.ended).toBe('draining')
  })
})
