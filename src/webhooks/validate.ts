import { AppError, errors } from '../errors.js'
import { measureText, queryLimit, queryParams, queryValue, requireBody } from '../plants/validate.js'
import type { AttemptCursor, DeliveryCursor, DeliveryStatus } from '../store/types.js'
import {
  DESCRIPTION_MAX_LENGTH,
  URL_MAX_LENGTH,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ID_PATTERN,
  type WebhookEventType,
} from './model.js'
import { refusedHost } from './url-safety.js'

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
export function validateWebhookUrl(value: unknown, allowPrivateUrls: boolean): string {
  if (typeof value !== 'string') throw new AppError(errors.WEBHOOK_URL_INVALID)
  if (value.length > URL_MAX_LENGTH) throw urlTooLong()
  // The URL parser would drop a tab or newline and turn a lone surrogate into U+FFFD, storing a URL
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

function validateEvents(value: unknown): WebhookEventType[] {
  if (!Array.isArray(value) || value.length === 0) throw new AppError(errors.WEBHOOK_EVENTS_INVALID)
  for (const type of value) {
    if (!(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(type)) {
      throw new AppError(
        errors.WEBHOOK_EVENTS_INVALID,
        `The field events must list only ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      )
    }
  }
  return [...new Set(value as WebhookEventType[])]
}

function validateDescription(value: unknown): string | null {
  if (value === null) return null
  if (typeof value !== 'string') throw new AppError(errors.WEBHOOK_DESCRIPTION_INVALID)
  const length = measureText(value)
  if (length === -1) {
    // A lone surrogate has no UTF-8 encoding: stored, it would come back as U+FFFD.
    throw new AppError(
      errors.WEBHOOK_DESCRIPTION_INVALID,
      'The field description must not contain control characters or lone surrogates.',
    )
  }
  if (length > DESCRIPTION_MAX_LENGTH) throw new AppError(errors.WEBHOOK_DESCRIPTION_INVALID)
  return value
}

/**
 * `{url, events?, description?}`; events default to every type, and a description null or absent is
 * none (PATCH takes null the same way, as removing it). Unknown fields are ignored.
 */
export function validateNewWebhook(body: unknown, allowPrivateUrls: boolean): NewWebhookInput {
  const record = requireBody(body)
  return {
    url: validateWebhookUrl(record.url, allowPrivateUrls),
    events: record.events === undefined ? [...WEBHOOK_EVENT_TYPES] : validateEvents(record.events),
    description: record.description === undefined ? null : validateDescription(record.description),
  }
}

/** A partial update: only the fields present change; `description: null` removes it. */
export function validateWebhookUpdate(body: unknown, allowPrivateUrls: boolean): WebhookUpdateInput {
  const record = requireBody(body)
  const update: WebhookUpdateInput = {}
  if (record.url !== undefined) update.url = validateWebhookUrl(record.url, allowPrivateUrls)
  if (record.events !== undefined) update.events = validateEvents(record.events)
  if (record.description !== undefined) update.description = validateDescription(record.description)
  if (record.disabled !== undefined) {
    if (typeof record.disabled !== 'boolean') throw new AppError(errors.WEBHOOK_DISABLED_INVALID)
    update.disabled = record.disabled
  }
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

/** `{since}`: an RFC 3339 date-time no later than now; the body of a replay and of a recovery. */
export function validateReplay(body: unknown, now: number = Date.now()): { since: Date } {
  const record = requireBody(body)
  const at = typeof record.since === 'string' ? parseRfc3339(record.since) : undefined
  if (at === undefined || at.getTime() > now) throw new AppError(errors.REPLAY_SINCE_INVALID)
  return { since: at }
}

/**
 * Path ids that cannot exist are simply not found: the same answer as a deleted subscription. A
 * delivery id is left to the service, which looks up its subscription first: when that is missing
 * too, 40450 is the more precise answer.
 */
export function validateWebhookParams(params: unknown): { id: string; deliveryId?: string } {
  const { id, deliveryId } = params as { id?: unknown; deliveryId?: unknown }
  if (typeof id !== 'string' || !WEBHOOK_ID_PATTERN.test(id)) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  return deliveryId === undefined ? { id } : { id, deliveryId: String(deliveryId) }
}

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed']
export const DELIVERIES_LIMIT_MAX = 500
export const DELIVERIES_LIMIT_DEFAULT = 50

/** What `after` looks like: `<epoch ms>.<event seq>`, as the `Link` of the previous page gave it. */
export const DELIVERY_CURSOR_PATTERN = '^(0|[1-9][0-9]{0,14})\\.(0|[1-9][0-9]{0,14})$'
const DELIVERY_CURSOR = new RegExp(DELIVERY_CURSOR_PATTERN)

export interface DeliveriesQuery {
  limit: number
  status?: DeliveryStatus
  after?: DeliveryCursor
}

/** The deliveries listing's query, each refusal 40012 in words, as the plant listing's are. */
export function validateDeliveriesQuery(query: unknown): DeliveriesQuery {
  const raw = queryParams(query)
  const status = queryValue(raw, 'status')
  const result: DeliveriesQuery = { limit: queryLimit(raw, DELIVERIES_LIMIT_MAX, DELIVERIES_LIMIT_DEFAULT) }
  if (status !== undefined) {
    if (!(DELIVERY_STATUSES as readonly string[]).includes(status)) {
      throw new AppError(
        errors.QUERY_INVALID,
        `The query parameter status must be one of ${DELIVERY_STATUSES.join(', ')}.`,
      )
    }
    result.status = status as DeliveryStatus
  }
  const after = placeAfter(raw)
  if (after !== undefined) result.after = { createdAt: after.at, eventSeq: after.seq }
  return result
}

export interface AttemptsQuery {
  limit: number
  after?: AttemptCursor
}

/** A delivery's attempts are paged as the deliveries are: the same limits, the same cursor. */
export function validateAttemptsQuery(query: unknown): AttemptsQuery {
  const raw = queryParams(query)
  const result: AttemptsQuery = { limit: queryLimit(raw, DELIVERIES_LIMIT_MAX, DELIVERIES_LIMIT_DEFAULT) }
  const after = placeAfter(raw)
  if (after !== undefined) result.after = { attemptedAt: after.at, seq: after.seq }
  return result
}

/** A listing's `after`: a time and a sequence number, as the `Link` of the previous page gave them. */
function placeAfter(raw: Record<string, unknown>): { at: Date; seq: number } | undefined {
  const afterText = queryValue(raw, 'after')
  if (afterText === undefined) return undefined
  if (!DELIVERY_CURSOR.test(afterText)) {
    throw new AppError(
      errors.QUERY_INVALID,
      'The query parameter after must be the cursor given in the `Link` header of the previous page.',
    )
  }
  const [ms, seq] = afterText.split('.')
  return { at: new Date(Number(ms)), seq: Number(seq) }
}
