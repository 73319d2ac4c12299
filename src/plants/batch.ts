import { AppError, errors } from '../errors.js'
import type { BatchCreateItem, BatchCreateOutcome, PlantStore } from '../store/types.js'
import { currentTraceparent } from '../tracing/active.js'
import { type ChangeContext, plantEvent, plantJson } from './events.js'
import { INT64_MIN } from './int64.js'
import { NAME_MAX_LENGTH, type NewPlant, TAG_MAX_LENGTH } from './model.js'

/** The most plants a batch create, or ids a batch delete, takes in one request. */
export const BATCH_MAX_ITEMS = 1000

/**
 * The largest body a batch needs: BATCH_MAX_ITEMS plants, each with the longest id and with name and
 * tag at their longest in four-byte characters, written without spaces, plus room for formatting
 * (indentation and line ends) around each item. The batch routes accept this much whatever the
 * service-wide body limit, so that a full batch is never 413.
 */
export const BATCH_BODY_LIMIT = (() => {
  const largest = plantJson({
    id: INT64_MIN,
    name: '\u{1F33F}'.repeat(NAME_MAX_LENGTH),
    tag: '\u{1F33F}'.repeat(TAG_MAX_LENGTH),
  })
  const formatting = 64
  const item = Buffer.byteLength(largest) + formatting + 1
  return Buffer.byteLength('{"plants":[]}') + BATCH_MAX_ITEMS * item
})()

/** What the refusal of an item says first: which one, counted from 0 as in the body's JSON path. */
const item = (index: number) => `Item ${index}`

/** The first id that repeats an earlier one of the batch, refused with 409 before the store is asked. */
export function refuseRepeatedIds(ids: readonly bigint[]): void {
  const first = new Map<bigint, number>()
  for (const [index, id] of ids.entries()) {
    const earlier = first.get(id)
    if (earlier !== undefined) {
      throw new AppError(
        errors.ID_REPEATED,
        `${item(index)}: id ${id} appears more than once in the batch (first as item ${earlier}).`,
      )
    }
    first.set(id, index)
  }
}

/** The response to a batch create, as JSON text: every plant as created, in the order sent. */
export function createdJson(plants: readonly NewPlant[]): string {
  return `{"plants":[${plants.map(plantJson).join(',')}]}`
}

/** The response to a batch delete, as JSON text: ids as bare JSON integers, exact over int64. */
export function deletedJson(ids: readonly bigint[]): string {
  return `{"deleted":[${ids.join(',')}]}`
}

/** Each plant with the plant.created event its insert writes, recording who asked, traced to the request. */
export function batchItems(plants: readonly NewPlant[], by?: ChangeContext): BatchCreateItem[] {
  const options = { by, traceparent: currentTraceparent() }
  return plants.map((plant) => ({
    plant,
    event: (at) => plantEvent('plant.created', plant, at, options),
  }))
}

/** The refusal of a batch the store found an id of already stored. */
export function itemExists(plants: readonly NewPlant[], outcome: BatchCreateOutcome): AppError | undefined {
  if (outcome.outcome === 'created') return undefined
  const id = (plants[outcome.index] as NewPlant).id
  return new AppError(errors.PLANT_EXISTS, `${item(outcome.index)}: a plant with id ${id} already exists.`)
}

/** Creates every plant or none, one change each, recording who asked (`by`); the response body. */
export async function createPlants(
  store: PlantStore,
  plants: readonly NewPlant[],
  by?: ChangeContext,
): Promise<string> {
  refuseRepeatedIds(plants.map((plant) => plant.id))
  const outcome = await store.createMany(batchItems(plants, by))
  if (outcome === 'key-taken') throw new Error('a batch create without a key found its key taken')
  const refusal = itemExists(plants, outcome)
  if (refusal) throw refusal
  return createdJson(plants)
}

/**
 * Deletes every plant named or none (passing over missing ones when allowed), one change each,
 * recording who asked (`by`); the response body.
 */
export async function deletePlants(
  store: PlantStore,
  ids: readonly bigint[],
  allowMissing: boolean,
  by?: ChangeContext,
): Promise<string> {
  refuseRepeatedIds(ids)
  const options = { by, traceparent: currentTraceparent() }
  const outcome = await store.removeMany(ids, {
    allowMissing,
    event: (plant, at) => plantEvent('plant.deleted', plant, at, options),
  })
  if (outcome.outcome === 'missing') {
    const index = ids.indexOf(outcome.id)
    throw new AppError(errors.PLANT_NOT_FOUND, `${item(index)}: no plant has id ${outcome.id}.`)
  }
  return deletedJson(outcome.ids)
}
