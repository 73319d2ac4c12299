import { setNewest } from '../bounded-map.js'
import { type Count, type Counting, MAX_COUNTED_KEYS } from './counting.js'

/**
 * Counters of this process alone, each window timed on the monotonic clock from the key's first
 * request in it. The plugin's own store times them by the wall clock: a step back (NTP, a resumed VM)
 * puts a window's start in the future, so the count does not start again until the clock has caught
 * up, and a client that has spent its allowance is refused for as long as the step.
 */
export class LocalCounts implements Counting {
  /** In the order last counted, so the first is the one counted longest ago. */
  private readonly windows = new Map<string, { count: number; startedAt: number; windowMs: number }>()

  count(key: string, windowMs: number): Count {
    const now = performance.now()
    let window = this.windows.get(key)
    if (window === undefined || now - window.startedAt >= windowMs)
      window = { count: 0, startedAt: now, windowMs }
    window.count += 1
    setNewest(this.windows, key, window, MAX_COUNTED_KEYS)
    return { current: window.count, ttl: windowMs - (now - window.startedAt) }
  }

  giveBack(key: string): void {
    const window = this.windows.get(key)
    if (window && window.count > 0 && performance.now() - window.startedAt < window.windowMs)
      window.count -= 1
  }

  async close(): Promise<void> {}
}
