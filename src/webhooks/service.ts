import { AppError, errors } from '../errors.js'
import { pageOf } from '../page.js'
import type { AttemptRecord, DeliveryRecord, WebhookRecord, WebhookStore } from '../store/types.js'
import { currentTraceparent } from '../tracing/active.js'
import { DELIVERY_ID_PATTERN, newSecret, newWebhookId, PREVIOUS_SECRET_GRACE_MS, testEvent } from './model.js'
import type { AttemptsQuery, DeliveriesQuery, NewWebhookInput, WebhookUpdateInput } from './validate.js'

export async function createWebhook(
  store: WebhookStore,
  input: NewWebhookInput,
  now: Date = new Date(),
): Promise<WebhookRecord> {
  const record: WebhookRecord = {
    id: newWebhookId(),
    url: input.url,
    events: input.events,
    description: input.description,
    secret: newSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  }
  await store.insert(record)
  return record
}

export async function getWebhook(store: WebhookStore, id: string): Promise<WebhookRecord> {
  const record = await store.find(id)
  if (!record) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  return record
}

export async function updateWebhook(
  store: WebhookStore,
  id: string,
  input: WebhookUpdateInput,
  now: Date = new Date(),
): Promise<WebhookRecord> {
  const current = await getWebhook(store, id)
  const changes: Parameters<WebhookStore['update']>[1] = { updatedAt: now }
  if (input.url !== undefined) changes.url = input.url
  // Another receiver starts its own count towards automatic disabling: the failures so far were the
  // old one's, and a fixed endpoint would otherwise be disabled at its first failure.
  if (input.url !== undefined && input.url !== current.url) changes.failingSince = null
  if (input.events !== undefined) changes.events = input.events
  if (input.description !== undefined) changes.description = input.description
  if (input.disabled === true && !current.disabledAt) {
    changes.disabledAt = now
    changes.disabledReason = 'manual'
  }
  if (input.disabled === false && current.disabledAt) {
    // Re-enabling starts a fresh count towards automatic disabling.
    Object.assign(changes, { disabledAt: null, disabledReason: null, failingSince: null })
  }
  const updated = await store.update(id, changes)
  if (!updated) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  return updated
}

export async function deleteWebhook(store: WebhookStore, id: string): Promise<void> {
  if (!(await store.delete(id))) throw new AppError(errors.WEBHOOK_NOT_FOUND)
}

/**
 * A new secret signs from now on; the one it replaces keeps signing too for 24 hours, then stops.
 * There is one previous secret: a rotation within those 24 hours drops the one before at once.
 * The store swaps the secrets in one statement: a secret read first and written back would let two
 * rotations that cross both keep the original, and the secret the first one returned never sign.
 */
export async function rotateSecret(
  store: WebhookStore,
  id: string,
  now: Date = new Date(),
): Promise<WebhookRecord> {
  const previousExpiresAt = new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS)
  const updated = await store.rotateSecret(id, newSecret(), previousExpiresAt, now)
  if (!updated) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  return updated
}

export async function sendTestEvent(store: WebhookStore, id: string): Promise<DeliveryRecord> {
  await getWebhook(store, id)
  // Deleted since it was found: the response is the one the client would have had a moment later.
  const delivery = await store.enqueueTest(id, { ...testEvent(id), traceparent: currentTraceparent() })
  if (!delivery) throw new AppError(errors.WEBHOOK_NOT_FOUND)
  return delivery
}

/**
 * A delivery's place in its listing as the `after` of the next page: its time in epoch milliseconds
 * and its event's seq. It names a place, not a row, so a page still follows once retention deleted
 * the delivery it was taken from.
 */
function cursorOf(d: DeliveryRecord): string {
  return `${d.createdAt.getTime()}.${d.eventSeq}`
}

/** A page of deliveries, newest first, and the cursor of the next page when one may follow. */
export async function listDeliveries(
  store: WebhookStore,
  id: string,
  options: DeliveriesQuery,
): Promise<{ deliveries: DeliveryRecord[]; next: string | undefined }> {
  await getWebhook(store, id)
  const rows = await store.listDeliveries(id, { ...options, limit: options.limit + 1 })
  const page = pageOf(rows, options.limit, cursorOf)
  return { deliveries: page.rows, next: page.next }
}

/** An attempt's place in its delivery's listing, in the form of a delivery's (see cursorOf). */
function attemptCursorOf(a: AttemptRecord): string {
  return `${a.attemptedAt.getTime()}.${a.seq}`
}

/** A page of a delivery's attempts, newest first, and the cursor of the next page when one may follow. */
export async function listAttempts(
  store: WebhookStore,
  id: string,
  deliveryId: string,
  options: AttemptsQuery,
): Promise<{ attempts: AttemptRecord[]; next: string | undefined }> {
  // An id that cannot be a delivery's is not looked for: no delivery has it.
  const rows = DELIVERY_ID_PATTERN.test(deliveryId)
    ? await store.listAttempts(id, deliveryId, { ...options, limit: options.limit + 1 })
    : undefined
  if (rows === undefined) {
    // As for a retry: a missing subscription is the more precise response.
    await getWebhook(store, id)
    throw new AppError(errors.DELIVERY_NOT_FOUND)
  }
  const page = pageOf(rows, options.limit, attemptCursorOf)
  return { attempts: page.rows, next: page.next }
}

export async function retryDelivery(
  store: WebhookStore,
  id: string,
  deliveryId: string,
  now: Date = new Date(),
): Promise<DeliveryRecord> {
  // An id that cannot be a delivery's is not looked for: no delivery has it.
  const delivery = DELIVERY_ID_PATTERN.test(deliveryId)
    ? await store.requeueDelivery(id, deliveryId, now)
    : undefined
  if (!delivery) {
    // Deleting a subscription deletes its deliveries: a missing subscription is then the reason, and
    // the response the client can act on. Looked up only now, so no deletion can fall in between.
    await getWebhook(store, id)
    throw new AppError(errors.DELIVERY_NOT_FOUND)
  }
  return delivery
}

/**
 * Runs a queueing of deliveries (a replay, a recovery) for a subscription that exists, and says how
 * many it queued. Nothing queued may mean the subscription was deleted since it was found: then it
 * is a 404, as it would have been a moment earlier, not an empty response.
 */
async function queueFor(store: WebhookStore, id: string, queue: () => Promise<number>): Promise<number> {
  await getWebhook(store, id)
  const queued = await queue()
  if (queued === 0) await getWebhook(store, id)
  return queued
}

/** Queues every event of the subscribed types since `since` again; how many. */
export function replayEvents(
  store: WebhookStore,
  id: string,
  since: Date,
  now: Date = new Date(),
): Promise<number> {
  return queueFor(store, id, () => store.replay(id, since, now))
}

/** Queues again the subscription's deliveries that ended failed at or after `since`; how many. */
export function recoverDeliveries(
  store: WebhookStore,
  id: string,
  since: Date,
  now: Date = new Date(),
): Promise<number> {
  return queueFor(store, id, () => store.recover(id, since, now))
}
