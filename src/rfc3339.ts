// RFC 3339 sets no limit on the digits of a fraction (time-secfrac = "." 1*DIGIT): a client printing
// picoseconds still names an instant.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/i

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return [4, 6, 9, 11].includes(month) ? 30 : 31
}

/**
 * The instant an RFC 3339 date-time names, or undefined when it names none: February 30, hour 24 or
 * an offset of +24:00 fit the pattern, and `Date` would roll them over into the next month or day.
 * A leap second (`:60`, which the grammar allows at any minute) is taken as the end of its minute,
 * as JavaScript time has no leap seconds; fractions finer than a millisecond are cut off.
 */
export function parseRfc3339(text: string): Date | undefined {
  const match = RFC3339.exec(text)
  if (!match) return undefined
  // The numbered groups: date, time, then the offset's hours and minutes (0 for Z).
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = [1, 2, 3, 4, 5, 6, 9, 10].map(
    (group) => Number(match[group] ?? 0),
  ) as [number, number, number, number, number, number, number, number]
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 60 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return undefined
  }
  const milliseconds = second === 60 ? 0 : Number((match[7] ?? '').padEnd(3, '0').slice(0, 3))
  // setUTCFullYear, unlike Date.UTC, keeps the years 0–99 as written; second 60 carries into the
  // next minute, its end.
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute, second, milliseconds)
  const offset = (match[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  return new Date(at.getTime() - offset)
}

/** Whether a text is an RFC 3339 date-time naming an instant: the schemas' `date-time` format. */
export function isRfc3339(text: string): boolean {
  return parseRfc3339(text) !== undefined
}
