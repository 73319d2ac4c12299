import { isIP } from 'node:net'
import { AppError, errors } from '../errors.js'
import { measureText, requireBody } from '../plants/validate.js'
import {
  DELIVERY_ID_PATTERN,
  DESCRIPTION_MAX_LENGTH,
  URL_MAX_LENGTH,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ID_PATTERN,
  type WebhookEventType,
} from './model.js'
import { isForbiddenAddress, isLocalHostName } from './url-safety.js'

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
 * An absolute http(s) URL without credentials. Unless private targets are allowed, a host that is a
 * forbidden address in any spelling the URL parser understands (decimal, octal or hex IPv4, IPv4
 * inside IPv6) or a name for this machine is refused here; names are checked again, by address, on
 * every connection.
 */
export function validateWebhookUrl(value: unknown, allowPrivateUrls: boolean): string {
  if (typeof value !== 'string' || value.length > URL_MAX_LENGTH)
    throw new AppError(errors.WEBHOOK_URL_INVALID)
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
  if (!allowPrivateUrls) {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isLocalHostName(host) || (isIP(host) !== 0 && isForbiddenAddress(host))) {
      throw new AppError(errors.WEBHOOK_URL_FORBIDDEN)
    }
  }
  return url.href
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

/** `{url, events?, description?}`; events default to every type. Unknown fields are ignored. */
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

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/** `{since}`: an RFC 3339 date-time no later than now. */
export function validateReplay(body: unknown, now: number = Date.now()): { since: Date } {
  const record = requireBody(body)
  const since = record.since
  if (typeof since !== 'string' || !RFC3339.test(since)) throw new AppError(errors.REPLAY_SINCE_INVALID)
  const at = new Date(since)
  if (Number.isNaN(at.getTime()) || at.getTime() > now) throw new AppError(errors.REPLAY_SINCE_INVALID)
  return { since: at }
}

/** Path ids that cannot exist are simply not found: the same answer as a deleted subscription. */
export function validateWebhookParams(params: unknown): { id: string; deliveryId?: string } {
  const { id, deliveryId } = params as { id?: unknown; deliveryId?: unknown }
  if (typeof id !== 'string' || !WEBHOOK_ID_PATTERN.test(id)) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  if (deliveryId === undefined) return { id }
  if (typeof deliveryId !== 'string' || !DELIVERY_ID_PATTERN.test(deliveryId)) {
    throw new AppError(errors.DELIVERY_NOT_FOUND)
  }
  return { id, deliveryId }
}
