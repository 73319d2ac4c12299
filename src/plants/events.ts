import { randomBytes } from 'node:crypto'
import type { OutboxEvent } from '../store/types.js'
import type { Plant } from './model.js'

export type PlantEventType = 'plant.created' | 'plant.updated' | 'plant.deleted'

/** A plant as JSON text, id written from its bigint so no digit is lost. Absent tag, absent key. */
export function plantJson(plant: Plant): string {
  const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`
  return `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}${tag}}`
}

/**
 * The event a change to a plant produces, as a Standard Webhooks envelope
 * `{type, timestamp, data}`. It is written in the same transaction as the change (a transactional
 * outbox), so an event exists if and only if its change committed. The id is the `webhook-id`
 * receivers deduplicate on.
 */
export function plantEvent(type: PlantEventType, plant: Plant, at: Date = new Date()): OutboxEvent {
  const timestamp = at.toISOString()
  return {
    id: `msg_${randomBytes(12).toString('base64url')}`,
    type,
    occurredAt: at,
    payload: `{"type":"${type}","timestamp":"${timestamp}","data":${plantJson(plant)}}`,
  }
}
