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
 * The event a change to a plant produces, as a Standard Webhooks envelope
 * `{type, timestamp, data}`. It is written in the same transaction as the change (a transactional
 * outbox), so an event exists if and only if its change committed. It has no id: the store gives it
 * one made from its seq and time (the `webhook-id` receivers deduplicate on). `traceparent` is that
 * of the traced request that made the change (currentTraceparent, taken when the request asked, not
 * when its batch is written).
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
    type,
    occurredAt: at,
    payload: `{"type":"${type}","timestamp":"${timestamp}","data":${json}}`,
    traceparent,
  }
}
