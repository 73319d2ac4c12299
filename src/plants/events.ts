import type { Actor, ChangeFacts, OutboxEvent } from '../store/types.js'
import type { Plant } from './model.js'

/** Each change to a plant writes one of these to the outbox. */
export const PLANT_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const
export type PlantEventType = (typeof PLANT_EVENT_TYPES)[number]

/** Who asks for a change, and in which request: what every change records of its cause. */
export interface ChangeContext {
  actor: Actor
  /** The X-Request-Id of the response; null for a change a command makes. */
  requestId: string | null
}

/** The actor and request of a change `plantstore import` makes. */
export const IMPORT_CONTEXT: ChangeContext = { actor: { cli: 'import' }, requestId: null }

export interface PlantEventOptions {
  /** Who made the change: recorded with the event as its change facts. Without it, no facts. */
  by?: ChangeContext
  /** For an update, the plant as it was. */
  before?: Plant
  /** The plant's JSON text, when the caller has it already. */
  json?: string
  /** The traceparent of the traced request (or command) that made the change. */
  traceparent?: string
}

const NONE: PlantEventOptions = {}

/** A plant as JSON text, id written from its bigint so no digit is lost. Absent tag, absent key. */
export function plantJson(plant: Plant): string {
  const tagged = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`
  return `{"id":${plant.id.toString()},"name":${JSON.stringify(plant.name)}${tagged}}`
}

/**
 * The event a change to a plant produces, as a Standard Webhooks envelope
 * `{type, timestamp, data}`, with the change's facts (who, which request, the plant before an
 * update). It is written in the same transaction as the change (a transactional outbox), so an event
 * exists if and only if its change committed. It has no id: the store gives it one made from its seq
 * and time (the `webhook-id` receivers deduplicate on). `traceparent` is that of the traced request
 * that made the change (currentTraceparent, taken when the request asked, not when its batch is
 * written).
 */
export function plantEvent(
  type: PlantEventType,
  plant: Plant,
  at: Date = new Date(),
  { by, before, json = plantJson(plant), traceparent }: PlantEventOptions = NONE,
): OutboxEvent {
  const timestamp = at.toISOString()
  return {
    type,
    occurredAt: at,
    payload: `{"type":"${type}","timestamp":"${timestamp}","data":${json}}`,
    traceparent,
    change: by === undefined ? undefined : changeFacts(by, plant.id, before),
  }
}

function changeFacts(by: ChangeContext, plantId: bigint, before: Plant | undefined): ChangeFacts {
  return {
    plantId,
    actor: by.actor,
    requestId: by.requestId,
    before: before === undefined ? null : plantJson(before),
  }
}
