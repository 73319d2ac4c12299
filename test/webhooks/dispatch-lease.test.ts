import type { FastifyBaseLogger } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LeaseStore } from '../../src/store/types.js'
import { DispatchLease } from '../../src/webhooks/dispatch-lease.js'

// The dispatcher lease against a database that stops answering for a while: what the holder keeps,
// what it says, and when it lets go. The lease's clock and timers are the test's.

/** A lease store that answers each acquire with the next of `answers` (an Error is thrown). */
function leaseStore(answers: Array<boolean | Error>, release: () => Promise<boolean> = async () => true) {
  return {
    acquire: vi.fn(async () => {
      const answer = answers.shift()
      if (answer === undefined) throw new Error('no answer planned')
      if (answer instanceof Error) throw answer
      return answer
    }),
    release: vi.fn(release),
  } as unknown as LeaseStore & { acquire: ReturnType<typeof vi.fn> }
}

function recordingLogger() {
  const said: Array<[level: string, msg: string]> = []
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      said.push([level, String(args.find((a) => typeof a === 'string'))])
  const logger = { info: at('info'), warn: at('warn'), debug: at('debug') } as unknown as FastifyBaseLogger
  return { logger, said }
}

/** A lease on `store` for holder p1, its clock `now`; what it logs and each change it reports. */
function leaseOn(store: LeaseStore, ttlMs: number, now: () => number) {
  const { logger, said } = recordingLogger()
  const changes: boolean[] = []
  const lease = new DispatchLease({
    store,
    holder: 'p1',
    ttlMs,
    logger,
    now,
    onChange: (held) => changes.push(held),
  })
  return { lease, said, changes }
}

describe('the webhook dispatcher lease while the database fails', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('keeps a held lease through failed renewals until it runs out, then takes it again once asked successfully', async () => {
    vi.useFakeTimers()
    let clock = 0
    const down = new Error('connection refused')
    const store = leaseStore([true, down, down, down, true])
    const { lease, said, changes } = leaseOn(store, 300, () => clock)
    lease.start()
    await vi.advanceTimersByTimeAsync(0)
    expect([lease.held(), changes]).toEqual([true, [true]])
    // Renewed every third of the lease: two failures in a row leave it held.
    for (const at of [100, 200]) {
      clock = at
      await vi.advanceTimersByTimeAsync(100)
      expect(lease.held()).toBe(true)
    }
    expect(said.filter(([level]) => level === 'warn')).toEqual([
      ['warn', 'could not renew the webhook dispatcher lease'],
      ['warn', 'could not renew the webhook dispatcher lease'],
    ])
    // The third fails as the lease runs out: it is lost, said once; a standby's failure is only debug.
    clock = 300
    await vi.advanceTimersByTimeAsync(100)
    expect([lease.held(), changes]).toEqual([false, [true, false]])
    expect(said.slice(-2)).toEqual([
      ['debug', 'could not ask for the webhook dispatcher lease'],
      ['warn', 'webhook dispatcher lease lost: this process stops sending webhooks'],
    ])
    // A standby asks again within the lease's third (here shorter than a second), and wins it.
    clock = 400
    await vi.advanceTimersByTimeAsync(100)
    expect([lease.held(), changes]).toEqual([true, [true, false, true]])
    expect(store.acquire).toHaveBeenCalledTimes(5)
    await lease.stop()
  })

  it('stops though the lease cannot be released, which then runs out by itself', async () => {
    vi.useFakeTimers()
    const store = leaseStore([true], async () => {
      throw new Error('connection refused')
    })
    const { lease, said, changes } = leaseOn(store, 30_000, () => 0)
    lease.start()
    await vi.advanceTimersByTimeAsync(0)
    await lease.stop()
    expect(store.release).toHaveBeenCalledTimes(1)
    expect(said.at(-1)).toEqual(['warn', 'could not release the webhook dispatcher lease'])
    expect([lease.held(), changes]).toEqual([false, [true, false]])
    // Nothing asks for it after the stop.
    await vi.advanceTimersByTimeAsync(60_000)
    expect(store.acquire).toHaveBeenCalledTimes(1)
  })
})
