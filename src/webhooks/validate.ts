import { AppError, errors } from '../errors.js'
import { measureText } from '../plants/validate.js'
import type { AttemptCursor, DeliveryCursor, DeliveryStatus } from '../store/types.js'
import { URL_MAX_LENGTH, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './model.js'
import { refusedHost } from './url-safety.js'

// What a subscription request may hold is said by its schema (src/http/schemas.ts), which is also
// what checks it (src/http/validation.ts). Here are the rules a schema cannot say: what a URL's
// parse makes of it and where it points, a time not in the future, the defaults, and the cursors'
// meaning.

/** A NewWebhook body as its schema leaves it. */
export interface NewWebhookBody {
  url: string
  events?: WebhookEventType[]
  description?: string | null
}

/** A WebhookUpdate body as its schema leaves it. */
export type WebhookUpdateBody = Partial<NewWebhookBody> & { disabled?: boolean }

export interface NewWebhookInput {
  url: string
  events: WebhookEventType[]
  description: string | null
}

export interface WebhookUpdateInput {
  url?: string
  events?: WebhookEventType[]
  description?: string | null
  disabled?: boolean
}

/**
 * An absolute http(s) URL without credentials or fragment. Unless private targets are allowed, a
 * host that is a forbidden address in any spelling the URL parser understands (decimal, octal or hex
 * IPv4, IPv4 inside IPv6) or a name for this machine is refused here; names are checked again, by
 * address, on every connection.
 */
export function validateWebhookUrl(value: string, allowPrivateUrls: boolean): string {
  // Not a `text` format in the schema: the URL's own words say why it is refused. The URL parser would drop a tab or newline and turn a lone surrogate into U+FFFD, storing a URL
  // other than the one sent: such a URL is refused instead.
  if (measureText(value) === -1) {
    throw new AppError(
      errors.WEBHOOK_URL_INVALID,
      'The field url must not contain control characters or lone surrogates.',
    )
  }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new AppError(errors.WEBHOOK_URL_INVALID)
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username ||
    url.password ||
    !url.hostname
  ) {
    throw new AppError(errors.WEBHOOK_URL_INVALID)
  }
  // Node connects to the scheme's default port when told port 0: the receiver would be another one.
  if (url.port === '0') {
    throw new AppError(errors.WEBHOOK_URL_INVALID, 'The field url must name a port from 1 to 65535, or none.')
  }
  // HTTP never sends a fragment: stored, it would show a URL other than the one the receiver is
  // called with. The href, not hash, so that a bare '#' (an empty hash) is refused too.
  if (url.href.includes('#')) {
    throw new AppError(
      errors.WEBHOOK_URL_INVALID,
      'The field url must not have a fragment (#…): it is never sent.',
    )
  }
  // The parsed form is what is stored, shown and sent, and percent-encoding can make it several times
  // longer than what was sent (é is %C3%A9): held to the limit, it is a URL a PATCH takes back.
  if (url.href.length > URL_MAX_LENGTH) throw urlTooLong()
  if (!allowPrivateUrls) {
    if (refusedHost(url.hostname) !== undefined) throw new AppError(errors.WEBHOOK_URL_FORBIDDEN)
  }
  return url.href
}

function urlTooLong(): AppError {
  return new AppError(
    errors.WEBHOOK_URL_INVALID,
    `The field url must be at most ${URL_MAX_LENGTH} characters.`,
  )
}

/** The event types, each once; every type when none are named. */
function eventsOf(events: WebhookEventType[] | undefined): WebhookEventType[] {
  return events === undefined ? [...WEBHOOK_EVENT_TYPES] : [...new Set(events)]
}

/**
 * A subscription to create: its URL as parsed and allowed, events defaulting to every type, a
 * description null or absent being none.
 */
export function newWebhookInput(body: NewWebhookBody, allowPrivateUrls: boolean): NewWebhookInput {
  return {
    url: validateWebhookUrl(body.url, allowPrivateUrls),
    events: eventsOf(body.events),
    description: body.description ?? null,
  }
}

/**
 * A partial update: only the fields present change; `description: null` removes it. At least one
 * must be present, counted after unknown fields are dropped, which is why it is not the schema's
 * minProperties (Ajv counts before it drops them).
 */
export function webhookUpdateInput(body: WebhookUpdateBody, allowPrivateUrls: boolean): WebhookUpdateInput {
  const update: WebhookUpdateInput = {}
  if (body.url !== undefined) update.url = validateWebhookUrl(body.url, allowPrivateUrls)
  if (body.events !== undefined) update.events = eventsOf(body.events)
  if (body.description !== undefined) update.description = body.description
  if (body.disabled !== undefined) update.disabled = body.disabled
  if (Object.keys(update).length === 0) throw new AppError(errors.WEBHOOK_UPDATE_EMPTY)
  return update
}

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
function parseRfc3339(text: string): Date | undefined {
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

/** Whether a text is an RFC 3339 date-time naming an instant: the schema's `date-time` format. */
export function isRfc3339(text: string): boolean {
  return parseRfc3339(text) !== undefined
}

/**
 * `{since}` of a replay and a recovery, its format checked by the schema: the instant, no later than
 * now, which no schema can say.
 */
export function validateReplay(body: { since: string }, now: number = Date.now()): { since: Date } {
  const at = parseRfc3339(body.since)
  if (at === undefined || at.getTime() > now) throw new AppError(errors.REPLAY_SINCE_INVALID)
  return { since: at }
}

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed']
export const DELIVERIES_LIMIT_MAX = 500
export const DELIVERIES_LIMIT_DEFAULT = 50

/** What `after` looks like: `<epoch ms>.<event seq>`, as the `Link` of the previous page gave it. */
export const DELIVERY_CURSOR_PATTERN = '^(0|[1-9][0-9]{0,14})\\.(0|[1-9][0-9]{0,14})$'

export interface DeliveriesQuery {
  limit: number
  status?: DeliveryStatus
  after?: DeliveryCursor
}

/** The deliveries listing's query as its schema leaves it. */
export interface DeliveriesQueryText {
  limit: number
  status?: DeliveryStatus
  after?: string
}

/** The deliveries listing's query, its cursor read as the time and sequence it names. */
export function deliveriesQuery(query: DeliveriesQueryText): DeliveriesQuery {
  const result: DeliveriesQuery = { limit: query.limit }
  if (query.status !== undefined) result.status = query.status
  const after = placeAfter(query.after)
  if (after !== undefined) result.after = { createdAt: after.at, eventSeq: after.seq }
  return result
}

export interface AttemptsQuery {
  limit: number
  after?: AttemptCursor
}

/** A delivery's attempts are paged as the deliveries are: the same limits, the same cursor. */
export function attemptsQuery(query: { limit: number; after?: string }): AttemptsQuery {
  const result: AttemptsQuery = { limit: query.limit }
  const after = placeAfter(query.after)
  if (after !== undefined) result.after = { attemptedAt: after.at, seq: after.seq }
  return result
}

/** A cursor the schema's pattern let through: a time and a sequence number. */
function placeAfter(after: string | undefined): { at: Date; seq: number } | undefined {
  if (after === undefined) return undefined
  const [ms, seq] = after.split('.')
  return { at: new Date(Number(ms)), seq: Number(seq) }
}
