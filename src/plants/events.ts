import { randomBytes } from 'node:crypto'
import type { OutboxEvent } from '../store/types.js'
import type { Plant } from './model.js'

/** Each change to a plant writes one of these to the outbox. */
export const PLANT_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const
export type PlantEventType = (typeof PLANT_EVENT_TYPES)[number]

/** A plant as JSON text, id written from its bigint so no digit is lost. Absent tag, absent key. */
export function plantJson(plant: Plant): string {
  const tagged = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`
  return `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}${tagged}}`
}

/**
 * A unique message id that sorts by time: the millisecond clock in hex, then 80 random bits. Ids
 * written in one commit then sit side by side at the end of the events index instead of touching
 * one random index page each, which keeps every group commit (and its fsync) small.
 */
export function messageId(at: Date): string {
  return `msg_${at.getTime().toString(16).padStart(12, '0')}${randomPart()}`
}

// Random bytes come from a pool refilled 4 KiB at a time: one call into the CSPRNG per 400 events
// instead of one per create.
const POOL_SIZE = 4096
const ID_BYTES = 10
let pool = randomBytes(POOL_SIZE)
let offset = 0

function randomPart(): string {
  if (offset + ID_BYTES > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  offset += ID_BYTES
  return pool.toString('base64url', offset - ID_BYTES, offset)
}

/**
 * The event a change to a plant produces, as a Standard Webhooks envelope
 * `{type, timestamp, data}`. It is written in the same transaction as the change (a transactional
 * outbox), so an event exists if and only if its change committed. The id is the `webhook-id`
 * receivers deduplicate on. `traceparent` is that of the traced request that made the change
 * (currentTraceparent, taken when the request asked, not when its batch is written).
 */
export function plantEvent(
  type: PlantEventType,
  plant: Plant,
  at: Date = new Date(),
  json: string = plantJson(plant),
  traceparent?: string,
): OutboxEvent {
  const timestamp = at.toISOString()
  return {
    id: messageId(at),
    type,
    occurredAt: at,
    payload: `{"type":"${type}","timestamp":"${timestamp}","data":${json}}`,
    traceparent,
  }
}
