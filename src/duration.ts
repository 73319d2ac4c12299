const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Parses `500ms`, `30s`, `5m`, `12h`, `30d` into milliseconds; null when it is not one of those. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim())
  if (!match) return null
  const [, amount, unit] = match
  return Number(amount) * (UNITS[unit as string] as number)
}
