import { AppError, errors } from '../errors.js'
import type {
  ListedPlant,
  ListPosition,
  PlantChange,
  PlantFilter,
  PlantStore,
  WriteOptions,
  WriteResult,
} from '../store/types.js'
import { currentTraceparent } from '../tracing/active.js'
import { decodeCursor, encodeCursor } from './cursor.js'
import { etagOf, etagOfJson, matchesStrong, matchesWeak } from './etag.js'
import { type ChangeContext, plantEvent, plantJson } from './events.js'
import type { NewPlant, Plant } from './model.js'
import { orderOf, type PlantListQuery } from './validate.js'

/** A plant with the ETag of its current version. */
export interface TaggedPlant {
  plant: Plant
  etag: string
}

/**
 * The plant as created, with the ETag of its first version and its JSON text (the response's body).
 * `by` is who asked, recorded with the change.
 */
export async function createPlant(
  store: PlantStore,
  plant: NewPlant,
  by?: ChangeContext,
): Promise<TaggedPlant & { json: string }> {
  // One JSON text serves the event's payload and the ETag's digest.
  const json = plantJson(plant)
  const options = { by, json, traceparent: currentTraceparent() }
  const outcome = await store.create(plant, {
    event: (at) => plantEvent('plant.created', plant, at, options),
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

/**
 * A page of plants, the cursor of the next page when another follows, and the number of plants the
 * filter keeps when the query asked for it.
 */
export interface PlantPage {
  plants: Plant[]
  next?: string
  total?: number
}

/** The plants a listing keeps: its text (the store folds it, as it folds names), its tags each once. */
function filterOf(query: PlantListQuery): PlantFilter {
  const filter: PlantFilter = {}
  if (query.q !== undefined) filter.text = query.q
  if (query.tag !== undefined) filter.tags = [...new Set(query.tag)]
  return filter
}

/** Where the page starts: after the `after` id, at the cursor, or at the beginning. */
function startOf(query: PlantListQuery, filter: PlantFilter): ListPosition | undefined {
  if (query.cursor !== undefined) {
    if (query.after !== undefined) {
      throw new AppError(
        errors.QUERY_INVALID,
        'The query parameters after and cursor cannot be given together: the cursor already says where the page starts.',
      )
    }
    return decodeCursor(query.cursor, query.sort, filter)
  }
  if (query.after === undefined) return undefined
  if (query.sort !== 'id') {
    throw new AppError(
      errors.QUERY_INVALID,
      'The query parameter after pages only the ascending id order (sort=id): page other orders with the cursor of the `Link` header.',
    )
  }
  return { id: query.after }
}

export async function listPlants(store: PlantStore, query: PlantListQuery): Promise<PlantPage> {
  const filter = filterOf(query)
  const after = startOf(query, filter)
  // One plant beyond the page tells whether another page follows, without a second query.
  const listing = store.list({
    ...filter,
    order: query.sort === 'id' ? undefined : orderOf(query.sort),
    after,
    limit: query.limit + 1,
  })
  // Counted only when asked: a count reads every plant the filter keeps, a page only its own.
  const [listed, total] = await Promise.all([listing, query.count === true ? store.count(filter) : undefined])
  // Copied, not cut short: a store may hand one page to every request that asked for it.
  const page: PlantPage = { plants: listed.slice(0, query.limit).map(({ plant }) => plant) }
  if (total !== undefined) page.total = total
  if (listed.length > query.limit) {
    const last = listed[query.limit - 1] as ListedPlant
    page.next = encodeCursor(query.sort, filter, { id: last.plant.id, key: last.key })
  }
  return page
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

/**
 * PUT and PATCH: a replacement names both fields (no tag means none), a merge patch only some. The
 * change records who asked (`by`) and the plant as it was.
 */
export async function changePlant(
  store: PlantStore,
  id: bigint,
  change: PlantChange,
  conditions: Preconditions = {},
  by?: ChangeContext,
): Promise<TaggedPlant> {
  const failed: FailedCondition = {}
  const traceparent = currentTraceparent()
  const result = await store.update(id, change, {
    precondition: preconditionsHold(conditions, failed),
    event: (plant, at, before) => plantEvent('plant.updated', plant, at, { by, before, traceparent }),
  })
  return written(id, result, failed)
}

/** Deletes the plant; the change records who asked (`by`), the event the plant as it was. */
export async function deletePlant(
  store: PlantStore,
  id: bigint,
  conditions: Preconditions = {},
  by?: ChangeContext,
): Promise<void> {
  const failed: FailedCondition = {}
  const options = { by, traceparent: currentTraceparent() }
  const result = await store.remove(id, {
    precondition: preconditionsHold(conditions, failed),
    event: (plant, at) => plantEvent('plant.deleted', plant, at, options),
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
