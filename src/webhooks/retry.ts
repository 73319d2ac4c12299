/**
 * When to try again after attempt number `attempt` (1-based) failed; null when the schedule is spent.
 * Each delay is spread by ±20% so receivers that come back are not hit by every retry at once.
 */
export function nextAttemptDelay(schedule: number[], attempt: number, random: () => number = Math.random) {
  const base = schedule[attempt - 1]
  if (base === undefined) return null
  return Math.round(base * (0.8 + 0.4 * random()))
}
