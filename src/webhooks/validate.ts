import { AppError, errors } from '../errors.js'
import { measureText } from '../plants/validate.js'
import { parseRfc3339 } from '../rfc3339.js'
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
