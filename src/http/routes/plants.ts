import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError, errors } from '../../errors.js'
import { etagOf, matchesStrong, matchesWeak, parseEntityTags } from '../../plants/etag.js'
import type { IdempotentCreates } from '../../plants/idempotency.js'
import type { NewPlant as NewPlantValue } from '../../plants/model.js'
import {
  changePlant,
  createPlant,
  deletePlant,
  listPlants,
  type Precondition,
  type Preconditions,
  readPlant,
  requireSameId,
} from '../../plants/service.js'
import {
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  type MergePatch,
  type PlantListQuery,
  type Replacement,
} from '../../plants/validate.js'
import type { Store } from '../../store/types.js'
import { parseIdempotencyKey } from '../idempotency-key.js'
import { plainJsonOnly } from '../json-body.js'
import { nextPageLink } from '../next-link.js'
import {
  BODY_ERRORS,
  errorResponses,
  INT64_RANGE,
  PATCH_MEDIA_TYPES,
  PlantId,
  patchErrorResponses,
  ref,
  TAG_TEXT,
} from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

const PlantIdParams = Type.Object({ id: PlantId })

const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
      description: 'Page size',
    }),
  ),
  after: Type.Optional(
    Type.Integer({
      format: 'int64',
      description: `Keyset cursor: only plants with a greater id, a signed 64-bit integer (${INT64_RANGE}). Take it from the \`Link: rel="next"\` header of the previous page.`,
    }),
  ),
  tag: Type.Optional(Type.String({ ...TAG_TEXT, description: 'Only plants with this tag' })),
})

// An answer holding one plant is a few hundred bytes at most (about 1.2 KB with its name and tag at
// their longest, all in four-byte characters): too little for gzip to repay its per-request hooks.
const ONE_PLANT_COMPRESSED = false

/** What a plant's fields can be refused with, in a create, a replacement or a merge patch. */
const PLANT_FIELD_ERRORS = [
  errors.ID_INVALID,
  errors.NAME_INVALID,
  errors.NAME_LENGTH,
  errors.TAG_INVALID,
  errors.TAG_LENGTH,
  errors.TEXT_CHARACTERS,
]

/** The errors of PUT and PATCH, which differ only in how the body is read. */
const CHANGE_ERRORS = [
  ...BODY_ERRORS,
  errors.PATH_ID_INVALID,
  ...PLANT_FIELD_ERRORS,
  errors.ID_MISMATCH,
  401,
  errors.SCOPE_MISSING,
  errors.PLANT_NOT_FOUND,
  412,
  500,
]

const ETag = { type: 'string', description: 'The version of the plant, for If-Match and If-None-Match' }

const IF_MATCH = {
  'if-match': Type.Optional(
    Type.String({
      description:
        'Apply only if the plant still has one of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way',
    }),
  ),
}

/** A write's conditions: If-Match, and If-None-Match, which RFC 9110 has every method honour. */
const WRITE_CONDITIONS = {
  ...IF_MATCH,
  'if-none-match': Type.Optional(
    Type.String({
      description:
        'Apply only if the plant has none of these ETags (else 412); `*` matches any plant that exists, and a missing plant is 404 either way',
    }),
  ),
}

// The key's rule is stated here for clients and checked by the handler (parseIdempotencyKey), which
// also takes the quoted form and refuses with the key's own code (40014): the schema refuses nothing.
export const CreateHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[!#-~][!-~]*$',
      description:
        'Makes retries safe: 1 to 255 visible characters, bare or as a quoted string. A retry with the same key and the same content replays the first answer; with different content it is 422; while the first is still running, 409. Kept 24 hours (configurable), per token.',
    }),
  ),
})

/** The JSON body as sent the first time, or as replayed. */
export function sendRecorded(
  reply: FastifyReply,
  answer: { status: number; body: string; replayed: boolean },
) {
  if (answer.replayed) reply.header('idempotent-replayed', 'true')
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body)
}

function ifMatchOf(request: FastifyRequest): Precondition {
  const header = request.headers['if-match']
  return header === undefined ? undefined : parseEntityTags(header)
}

function preconditionsOf(request: FastifyRequest): Preconditions {
  const ifNoneMatch = request.headers['if-none-match']
  return {
    ifMatch: ifMatchOf(request),
    ifNoneMatch: ifNoneMatch === undefined ? undefined : parseEntityTags(ifNoneMatch),
  }
}

function pathId(request: FastifyRequest): bigint {
  return (request.params as { id: bigint }).id
}

export async function plantRoutes(
  app: FastifyInstance,
  { store, idempotency }: { store: Store; idempotency: IdempotentCreates },
): Promise<void> {
  app.post(
    '/plants',
    {
      config: { scope: 'plants:write' },
      compress: ONE_PLANT_COMPRESSED,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'createPlant',
        summary: 'Creates a new plant in the store',
        tags: ['plants'],
        headers: CreateHeaders,
        body: ref('NewPlant'),
        response: {
          200: ref('StoredPlant', {
            description: 'Plant response: the stored plant, id included',
            headers: { ETag, 'Idempotent-Replayed': { type: 'string', description: '"true" on a replay' } },
          }),
          ...errorResponses(
            ...BODY_ERRORS,
            errors.ID_MISSING,
            ...PLANT_FIELD_ERRORS,
            errors.IDEMPOTENCY_KEY_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.PLANT_EXISTS,
            errors.IDEMPOTENCY_IN_PROGRESS,
            422,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const plant = request.body as NewPlantValue
      const key = parseIdempotencyKey(request.headers['idempotency-key'])
      const tokenId = request.principal?.tokenId as string
      if (key === undefined) {
        const created = await createPlant(store.plants, plant)
        reply.header('etag', created.etag)
        return created.plant
      }
      const answer = await idempotency.create(plant, tokenId, key)
      // A new plant is at version 1, so its ETag is known without another read.
      reply.header('etag', etagOf(plant, 1))
      return sendRecorded(reply, answer)
    },
  )

  app.get(
    '/plants',
    {
      config: { scope: 'plants:read' },
      schema: {
        operationId: 'listPlants',
        summary: 'Lists plants in ascending id order, one page at a time',
        description:
          'The body is a plain array. When another page may follow, a `Link: <…>; rel="next"` header gives its address; the last page has none.',
        tags: ['plants'],
        querystring: ListQuery,
        response: {
          200: {
            type: 'array',
            items: ref('StoredPlant'),
            description: 'A page of plants',
            headers: { Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`' } },
          },
          ...errorResponses(errors.QUERY_INVALID, 401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as PlantListQuery
      const page = await listPlants(store.plants, query)
      if (page.next !== undefined) reply.header('link', nextPageLink(query, page.next))
      return page.plants
    },
  )
  methodNotAllowed(app, '/plants', ['GET', 'HEAD', 'POST'])

  app.get(
    '/plants/:id',
    {
      config: { scope: 'plants:read' },
      compress: ONE_PLANT_COMPRESSED,
      schema: {
        operationId: 'getPlant',
        summary: 'Reads one plant',
        tags: ['plants'],
        params: PlantIdParams,
        headers: Type.Object({
          ...IF_MATCH,
          'if-none-match': Type.Optional(
            Type.String({
              description: 'Answer 304 without a body if the plant still has one of these ETags',
            }),
          ),
        }),
        response: {
          200: ref('StoredPlant', { description: 'The plant', headers: { ETag } }),
          304: {
            type: 'null',
            description: 'Not modified: the plant still has the ETag given',
            headers: { ETag },
          },
          ...errorResponses(
            errors.PATH_ID_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.PLANT_NOT_FOUND,
            412,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const { plant, etag } = await readPlant(store.plants, pathId(request))
      // RFC 9110 §13.2.2: If-Match is evaluated before If-None-Match, for a read as for a write.
      const ifMatch = ifMatchOf(request)
      if (ifMatch !== undefined && !matchesStrong(ifMatch, etag))
        throw new AppError(errors.PRECONDITION_FAILED)
      reply.header('etag', etag)
      const ifNoneMatch = request.headers['if-none-match']
      if (ifNoneMatch !== undefined && matchesWeak(parseEntityTags(ifNoneMatch), etag)) {
        return reply.code(304).send()
      }
      return plant
    },
  )

  app.put(
    '/plants/:id',
    {
      config: { scope: 'plants:write' },
      compress: ONE_PLANT_COMPRESSED,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'replacePlant',
        summary: 'Replaces the name and tag of a plant',
        tags: ['plants'],
        params: PlantIdParams,
        headers: Type.Object(WRITE_CONDITIONS),
        body: ref('Plant'),
        response: {
          200: ref('StoredPlant', { description: 'The plant as replaced', headers: { ETag } }),
          ...errorResponses(...CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const id = pathId(request)
      const body = request.body as Replacement
      requireSameId(id, body.id)
      const result = await changePlant(
        store.plants,
        id,
        { name: body.name, tag: body.tag ?? null },
        preconditionsOf(request),
      )
      reply.header('etag', result.etag)
      return result.plant
    },
  )

  app.patch(
    '/plants/:id',
    {
      config: { scope: 'plants:write' },
      compress: ONE_PLANT_COMPRESSED,
      schema: {
        operationId: 'updatePlant',
        summary: 'Changes the fields a JSON merge patch names',
        tags: ['plants'],
        params: PlantIdParams,
        headers: Type.Object(WRITE_CONDITIONS),
        consumes: PATCH_MEDIA_TYPES,
        body: ref('PlantPatch'),
        response: {
          200: ref('StoredPlant', { description: 'The plant as changed', headers: { ETag } }),
          ...patchErrorResponses(...CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const id = pathId(request)
      const { id: bodyId, ...change } = request.body as MergePatch
      requireSameId(id, bodyId)
      const result = await changePlant(store.plants, id, change, preconditionsOf(request))
      reply.header('etag', result.etag)
      return result.plant
    },
  )

  app.delete(
    '/plants/:id',
    {
      config: { scope: 'plants:write' },
      compress: ONE_PLANT_COMPRESSED,
      schema: {
        operationId: 'deletePlant',
        summary: 'Deletes a plant',
        tags: ['plants'],
        params: PlantIdParams,
        headers: Type.Object(WRITE_CONDITIONS),
        response: {
          204: { type: 'null', description: 'Deleted' },
          ...errorResponses(
            errors.PATH_ID_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.PLANT_NOT_FOUND,
            412,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      await deletePlant(store.plants, pathId(request), preconditionsOf(request))
      return reply.code(204).send()
    },
  )
  methodNotAllowed(app, '/plants/:id', ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])
}
