import { randomBytes } from 'node:crypto'
import { PLANT_EVENT_TYPES, type PlantEventType } from '../plants/events.js'
import type { OutboxEvent } from '../store/types.js'

/** The event types a subscription can ask for: every event a change to a plant writes. */
export const WEBHOOK_EVENT_TYPES = PLANT_EVENT_TYPES
export type WebhookEventType = PlantEventType

/** Sent only by `POST /webhooks/{id}/test`, to that subscription alone. */
export const TEST_EVENT_TYPE = 'webhook.test'

export const DESCRIPTION_MAX_LENGTH = 500
export const URL_MAX_LENGTH = 2000
export const SECRET_PREFIX = 'whsec_'
/** How long a rotated-out secret keeps signing beside the new one, unless a later rotation replaces it. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000

/**
 * How much of a response's body each attempt keeps, for people finding out why a receiver refused:
 * enough for an error message, small enough that recording every attempt stays cheap.
 */
export const ANSWER_BODY_KEPT_BYTES = 1024

export const WEBHOOK_ID_PATTERN = /^wh_[A-Za-z0-9_-]{22}$/
export const DELIVERY_ID_PATTERN = /^dlv_[0-9a-f]{24}$/

export function newWebhookId(): string {
  return `wh_${randomBytes(16).toString('base64url')}`
}

/** `whsec_` + base64 of 32 random bytes, the form Standard Webhooks libraries accept. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`
}

export function testEvent(webhookId: string, at: Date = new Date()): OutboxEvent {
  return {
    id: `msg_${randomBytes(12).toString('base64url')}`,
    type: TEST_EVENT_TYPE,
    occurredAt: at,
    payload: JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: at.toISOString(), data: { webhookId } }),
  }
}
