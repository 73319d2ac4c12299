import { parseDuration } from '../duration.js'

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h'

/** `5s,5m,30m` → delays in ms before the 2nd, 3rd, 4th attempt; null when malformed or empty. */
export function parseRetrySchedule(text: string): number[] | null {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.length > 20) return null
  const delays = parts.map((p) => parseDuration(p))
  return delays.every((d): d is number => d !== null) ? delays : null
}

/**
 * When to try again after attempt number `attempt` (1-based) failed; null when the schedule is spent.
 * Each delay is spread by ±20% so receivers that come back are not hit by every retry at once.
 */
export function nextAttemptDelay(schedule: number[], attempt: number, random: () => number = Math.random) {
  const base = schedule[attempt - 1]
  if (base === undefined) return null
  return Math.round(base * (0.8 + 0.4 * random()))
}
