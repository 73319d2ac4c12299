const DAY_MS = 86_400_000
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS }

/**
 * The longest duration accepted: 100 years. A lifetime or a cutoff is a date now ± the duration, and
 * past about 273,000 years that is no date at all (an expiry silently became "never" on SQLite).
 */
export const MAX_DURATION_MS = 36_500 * DAY_MS

/**
 * The longest duration a timer can wait for, a little under 2^31 − 1 ms: Node fires a longer
 * setTimeout or setInterval after 1 ms instead, so a long interval would run without pause.
 */
export const MAX_TIMER_MS = 24 * DAY_MS

/**
 * Parses `500ms`, `30s`, `5m`, `12h`, `30d` into milliseconds; null when it is not one of those, or
 * longer than `max`.
 */
export function parseDuration(text: string, max = MAX_DURATION_MS): number | null {
  // Up to 15 digits: the longest value in milliseconds has 13, and 15 digits times a day still make
  // an exact comparison with it. Nine digits refused 100 years written in seconds.
  const match = /^(\d{1,15})(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) return null
  const [, amount, unit] = match
  const ms = Number(amount) * (UNITS[unit as string] as number)
  return ms <= max ? ms : null
}

/** A limit as the settings' messages state it, in days: `24d`. */
export function inDays(ms: number): string {
  return `${ms / DAY_MS}d`
}
