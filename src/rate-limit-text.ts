import type { RateLimit } from './config.js'
import { inDays, MAX_TIMER_MS, parseDuration } from './duration.js'

// `COUNT/WINDOW`, as the service-wide --rate-limit flag and a token's own limit are both written.

/** What a limit looks like, for the messages that refuse one. */
export const RATE_LIMIT_FORM = `COUNT/WINDOW such as 100/1s or 6000/1m (a window of at most ${inDays(MAX_TIMER_MS)})`

/** `100/1s`, `6000/1m`; null when the text is not of that form (the count from 1, the window above zero). */
export function parseRateLimit(raw: string): RateLimit | null {
  const match = /^(\d{1,9})\/(.+)$/.exec(raw.trim())
  const max = match ? Number(match[1]) : 0
  const windowMs = match ? parseDuration(match[2] as string, MAX_TIMER_MS) : null
  return max >= 1 && windowMs !== null && windowMs >= 1 ? { max, windowMs } : null
}

const UNITS: Array<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
]

/** The limit written back as `COUNT/WINDOW`, the window in the largest unit that divides it: `100/1m`. */
export function formatRateLimit(limit: RateLimit): string {
  const [unit, size] = UNITS.find(([, size]) => limit.windowMs % size === 0) ?? ['ms', 1]
  return `${limit.max}/${limit.windowMs / size}${unit}`
}
