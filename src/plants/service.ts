import { AppError, errors } from '../errors.js'
import type { PlantChange, PlantStore, WriteOptions, WriteResult } from '../store/types.js'
import { currentTraceparent } from '../tracing/active.js'
import { etagOf, etagOfJson, matchesStrong, matchesWeak } from './etag.js'
import { plantEvent, plantJson } from './events.js'
import type { NewPlant, Plant } from './model.js'
import type { PlantListQuery } from './validate.js'

/** A plant with the ETag of its current version. */
export interface TaggedPlant {
  plant: Plant
  etag: string
}

/** The plant as created, with the ETag of its first version and its JSON text (the response's body). */
export async function createPlant(
  store: PlantStore,
  plant: NewPlant,
): Promise<TaggedPlant & { json: string }> {
  // One JSON text serves the event's payload and the ETag's digest.
  const json = plantJson(plant)
  const traceparent = currentTraceparent()
  const outcome = await store.create(plant, {
    event: (at) => plantEvent('plant.created', plant, at, json, traceparent),
  })
  if (outcome === 'exists') throw plantExists(plant.id)
  return { plant, etag: etagOfJson(json, 1), json }
}

export function plantExists(id: bigint): AppError {
  return new AppError(errors.PLANT_EXISTS, `A plant with id ${id} already exists.`)
}

function notFound(id: bigint): AppError {
  return new AppError(errors.PLANT_NOT_FOUND, `No plant has id ${id}.`)
}

/** The stored plant with its ETag and its JSON text (one text serves the ETag's digest and a body). */
export async function readPlant(store: PlantStore, id: bigint): Promise<TaggedPlant & { json: string }> {
  const found = await store.read(id)
  if (!found) throw notFound(id)
  const json = plantJson(found.plant)
  return { plant: found.plant, etag: etagOfJson(json, found.version), json }
}

/** A page of plants, and the id the next page starts after when another follows. */
export interface PlantPage {
  plants: Plant[]
  next?: bigint
}

export async function listPlants(store: PlantStore, query: PlantListQuery): Promise<PlantPage> {
  // One plant beyond the page tells whether another page follows, without a second query.
  const listed = await store.list({
    after: query.after === undefined ? undefined : { id: query.after },
    tags: query.tag === undefined ? undefined : [query.tag],
    limit: query.limit + 1,
  })
  const plants = listed.map(({ plant }) => plant)
  if (plants.length <= query.limit) return { plants }
  // Copied, not cut short: a store may hand one page to every request that asked for it.
  const page = plants.slice(0, query.limit)
  return { plants: page, next: (page[page.length - 1] as Plant).id }
}

/** Which header's condition a write's row failed, filled in by the precondition the store asks. */
interface FailedCondition {
  header?: 'If-Match' | 'If-None-Match'
}

/** The entity tags of an If-Match or If-None-Match header, '*' for any; undefined when there was none. */
export type Precondition = '*' | string[] | undefined

/** A write's conditional headers. */
export interface Preconditions {
  ifMatch?: Precondition
  ifNoneMatch?: Precondition
}

/**
 * The write's condition: the stored plant's ETag is one of If-Match's tags and none of
 * If-None-Match's (RFC 9110 §13.1.2: a false If-None-Match stops any method but a read, so `*` keeps
 * a write from overwriting a plant the client believed absent). The store asks it of the row its
 * write holds, so a change, or a delete and a re-create under the same id (whose version starts at 1
 * again), that lands meanwhile still fails with 412.
 */
function preconditionsHold(
  { ifMatch, ifNoneMatch }: Preconditions,
  failed: FailedCondition,
): WriteOptions['precondition'] {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined
  return (plant, version) => {
    const etag = etagOf(plant, version)
    failed.header = undefined
    if (ifMatch !== undefined && !matchesStrong(ifMatch, etag)) failed.header = 'If-Match'
    else if (ifNoneMatch !== undefined && matchesWeak(ifNoneMatch, etag)) failed.header = 'If-None-Match'
    return failed.header === undefined
  }
}

/**
 * The write's outcome as a response. The catalog's words for 412 speak of If-Match; a write that failed
 * on If-None-Match (alone, or beside an If-Match that held) says so instead.
 */
function written(id: bigint, result: WriteResult, failed: FailedCondition): TaggedPlant {
  if (result.outcome === 'missing') throw notFound(id)
  if (result.outcome === 'precondition-failed') {
    throw failed.header === 'If-None-Match'
      ? new AppError(errors.PRECONDITION_FAILED, 'The plant has one of the ETags If-None-Match names.')
      : new AppError(errors.PRECONDITION_FAILED)
  }
  return { plant: result.plant, etag: etagOf(result.plant, result.version) }
}

/** PUT and PATCH: a replacement names both fields (no tag means none), a merge patch only some. */
export async function changePlant(
  store: PlantStore,
  id: bigint,
  change: PlantChange,
  conditions: Preconditions = {},
): Promise<TaggedPlant> {
  const failed: FailedCondition = {}
  const traceparent = currentTraceparent()
  const result = await store.update(id, change, {
    precondition: preconditionsHold(conditions, failed),
    event: (plant, at) => plantEvent('plant.updated', plant, at, undefined, traceparent),
  })
  return written(id, result, failed)
}

export async function deletePlant(
  store: PlantStore,
  id: bigint,
  conditions: Preconditions = {},
): Promise<void> {
  const failed: FailedCondition = {}
  const traceparent = currentTraceparent()
  const result = await store.remove(id, {
    precondition: preconditionsHold(conditions, failed),
    event: (plant, at) => plantEvent('plant.deleted', plant, at, undefined, traceparent),
  })
  written(id, result, failed)
}

/** The id a PUT or PATCH body may carry must be the path's: a body cannot move a plant. */
export function requireSameId(pathId: bigint, bodyId: bigint | undefined): void {
  if (bodyId !== undefined && bodyId !== pathId) {
    throw new AppError(
      errors.ID_MISMATCH,
      `The id in the body (${bodyId}) must equal the id in the path (${pathId}).`,
    )
  }
}
