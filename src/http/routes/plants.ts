import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError, errors } from '../../errors.js'
import { type HistoryQuery as HistoryQueryValue, plantHistory } from '../../events/history.js'
import { HISTORY_LIMIT_DEFAULT, HISTORY_LIMIT_MAX } from '../../events/query.js'
import { etagOf, matchesStrong, matchesWeak, parseEntityTags } from '../../plants/etag.js'
import type { ChangeContext } from '../../plants/events.js'
import type { IdempotentCreates } from '../../plants/idempotency.js'
import type { NewPlant as NewPlantValue } from '../../plants/model.js'
import { TAG_MAX_LENGTH } from '../../plants/model.js'
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
  CURSOR_MAX_LENGTH,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_TAGS_MAX,
  type MergePatch,
  type PlantListQuery,
  type Replacement,
  SEARCH_MAX_LENGTH,
  SORT_TEXTS,
  TEXT_PATTERN,
} from '../../plants/validate.js'
import type { Store } from '../../store/types.js'
import type { Principal } from '../../tokens/service.js'
import { parseIdempotencyKey } from '../idempotency-key.js'
import { plainJsonOnly } from '../json-body.js'
import { nextLink, nextPageLink } from '../next-link.js'
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
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: SEARCH_MAX_LENGTH,
      pattern: TEXT_PATTERN,
      description: `Only plants whose name contains this text, case-insensitively: both are compared lower-cased by Unicode's rules (\`ölb\` finds Ölbaum, \`σίγμα\` finds ΣΊΓΜΑ) and composed (NFC), accents kept (\`ölb\` does not find OLBAUM). \`%\`, \`_\` and \`\\\` are ordinary characters. 1 to ${SEARCH_MAX_LENGTH} characters, without control characters (else 400, 40012).`,
    }),
  ),
  tag: Type.Optional(
    Type.Array(Type.String(TAG_TEXT), {
      minItems: 1,
      maxItems: LIST_TAGS_MAX,
      description: `Only plants whose tag is one of these, matched exactly: \`tag=fern&tag=aroid\`. Each 1 to ${TAG_MAX_LENGTH} characters, at most ${LIST_TAGS_MAX} of them (else 400, 40012).`,
    }),
  ),
  sort: Type.Optional(
    Type.Union(
      SORT_TEXTS.map((sort) => Type.Literal(sort)),
      {
        default: 'id',
        description:
          'The order: a field, ascending, or with a leading `-`, descending. Names compare by Unicode code point; plants with the same name or time follow in id order, in the same direction. Anything else is 400 (40012).',
      },
    ),
  ),
  count: Type.Optional(
    Type.Boolean({
      description:
        'true: the response carries `X-Total-Count`, the number of plants the filters keep (all pages, not only this one). Counting reads them all, so it is left out unless asked. Anything but `true` or `false`, or given twice, is 400 (40012).',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
      description: `Page size, 1 to ${LIST_LIMIT_MAX} (else 400, 40012)`,
    }),
  ),
  after: Type.Optional(
    Type.Integer({
      format: 'int64',
      description: `Only plants with a greater id, a signed 64-bit integer (${INT64_RANGE}), in the ascending id order only: with another \`sort\`, or beside \`cursor\`, it is 400 (40012). Pages of any order are linked with \`cursor\`.`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: CURSOR_MAX_LENGTH,
      pattern: '^[A-Za-z0-9_-]+$',
      description:
        'Where the page starts, opaque: take it from the `Link: rel="next"` header of the previous page, whose URL also repeats the `q`, `tag`, `sort` and `count` it belongs to. A cursor that was changed, or one sent with another `sort`, `q` or `tag` than its page had, is 400 (40012).',
    }),
  ),
})

const HistoryQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: HISTORY_LIMIT_MAX,
      default: HISTORY_LIMIT_DEFAULT,
      description: `Page size, 1 to ${HISTORY_LIMIT_MAX} (else 400, 40012)`,
    }),
  ),
  before: Type.Optional(
    Type.String({
      description:
        'Only changes older than this cursor: take it from the `Link: rel="next"` header of the previous page (or a change\'s `cursor`). Anything else is 400 (40080).',
    }),
  ),
})

// An answer holding one plant is a few hundred bytes at most (about 1.2 KB with its name and tag at
// their longest, all in four-byte characters): too little for gzip to repay its per-request hooks.
const ONE_PLANT_COMPRESSED = false

/** What a plant's fields can be refused with, in a create, a replacement, a merge patch or a batch. */
export const PLANT_FIELD_ERRORS = [
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

/** Who asks for a change (the token, or the JWT's issuer and subject) and the request's id. */
export function changeBy(request: FastifyRequest): ChangeContext {
  return { actor: (request.principal as Principal).maker, requestId: request.id }
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
        const created = await createPlant(store.plants, plant, changeBy(request))
        reply.header('etag', created.etag)
        return created.plant
      }
      const answer = await idempotency.create(plant, tokenId, key, changeBy(request))
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
        summary: 'Lists plants, searched by name, filtered by tags and sorted, one page at a time',
        description:
          'Every parameter combines with the others. The body is a plain array. When another page may follow, a `Link: <…>; rel="next"` header gives its address, with a `cursor`; the last page has none. Paging is by keyset in every order: a plant created, changed or deleted meanwhile never makes another appear twice or go missing.',
        tags: ['plants'],
        querystring: ListQuery,
        response: {
          200: {
            type: 'array',
            items: ref('StoredPlant'),
            description: 'A page of plants',
            headers: {
              Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`' },
              'X-Total-Count': {
                type: 'integer',
                minimum: 0,
                description: 'With `count=true`: how many plants the filters keep, on every page',
              },
            },
          },
          ...errorResponses(errors.QUERY_INVALID, 401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as PlantListQuery
      const page = await listPlants(store.plants, query)
      if (page.total !== undefined) reply.header('x-total-count', String(page.total))
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
        changeBy(request),
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
      const result = await changePlant(store.plants, id, change, preconditionsOf(request), changeBy(request))
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
      await deletePlant(store.plants, pathId(request), preconditionsOf(request), changeBy(request))
      return reply.code(204).send()
    },
  )
  methodNotAllowed(app, '/plants/:id', ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])

  app.get(
    '/plants/:id/history',
    {
      config: { scope: 'plants:read' },
      schema: {
        operationId: 'getPlantHistory',
        summary: "Lists a plant's changes, newest first, one page at a time",
        description:
          'Every create, update and delete of the plant that retention keeps (`--events-retention`), with who made it and the plant before and after. Readable after the plant is deleted. An id with no change kept (never used, or its changes all swept) has an empty history: 200 with `data: []`, not 404. When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.',
        tags: ['plants'],
        params: PlantIdParams,
        querystring: HistoryQuery,
        response: {
          200: {
            type: 'object',
            description: "A page of the plant's changes, newest first",
            required: ['data'],
            properties: { data: { type: 'array', items: ref('Change') } },
            headers: { Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`' } },
          },
          ...errorResponses(
            errors.PATH_ID_INVALID,
            errors.QUERY_INVALID,
            errors.CURSOR_INVALID,
            401,
            errors.SCOPE_MISSING,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const id = pathId(request)
      const query = request.query as HistoryQueryValue
      const page = await plantHistory(store.events, id, query)
      if (page.next !== undefined) {
        const params = { limit: String(query.limit), before: page.next }
        reply.header('link', nextLink(`/plants/${id}/history`, params))
      }
      return reply.type('application/json; charset=utf-8').send(page.json)
    },
  )
  methodNotAllowed(app, '/plants/:id/history', ['GET', 'HEAD'])
}
