import { afterEach, describe, expect, it, vi } from 'vitest'
import { SharedCounts } from '../../src/limits/shared-counts.js'
import type { RateLimitStore, Settlement, WindowChange } from '../../src/store/types.js'

/** The rate-limit windows of one database, whose clock runs `lagMs` behind the host's. */
class LaggingWindows implements RateLimitStore {
  private readonly held = new Map<string, number>()
  private readonly base = Date.now()
  private readonly since = performance.now()

  constructor(private readonly lagMs: number) {}

  async settle(changes: readonly WindowChange[]): Promise<Settlement> {
    const grants = changes.map((change) => {
      const id = `${change.key}@${change.start}`
      let held = (this.held.get(id) ?? 0) + change.overdraft
      const granted =
        change.requested > 0 ? Math.max(0, Math.min(change.requested, change.max - held)) : change.requested
      held += granted
      this.held.set(id, held)
      return { granted, unreserved: change.max - held }
    })
    return { grants, now: this.base + (performance.now() - this.since) - this.lagMs }
  }
}

const WINDOW_MS = 60_000
const counts: SharedCounts[] = []
afterEach(async () => {
  await Promise.all(counts.splice(0).map((c) => c.close()))
  vi.useRealTimers()
})

describe('shared counts', () => {
  it('keep the window they count in when the first settlement puts the clock back a little across its start', async () => {
    // The host's clock 3 ms into a window; the database's 20 ms behind it, in the window before.
    const boundary = Math.ceil(Date.now() / WINDOW_MS) * WINDOW_MS
    vi.useFakeTimers({ toFake: ['Date'], now: boundary + 3 })
    const shared = new SharedCounts(new LaggingWindows(20))
    counts.push(shared)
    vi.useRealTimers()
    const first = await shared.count('token:t', WINDOW_MS, 10)
    expect(first.current).toBeLessThanOrEqual(10)
    expect(first.ttl).toBeGreaterThan(WINDOW_MS - 1000)
    // The second waits for the settlement that tells the database's clock.
    const second = await shared.count('token:t', WINDOW_MS, 10)
    expect(second.current).toBeLessThanOrEqual(10)
    // Counted in the same window: had the clock run back into the one before, it would end in ms.
    const third = await shared.count('token:t', WINDOW_MS, 10)
    expect(third.current).toBeLessThanOrEqual(10)
    expect(third.ttl).toBeGreaterThan(WINDOW_MS - 1000)
  })
})
