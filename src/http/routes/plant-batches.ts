import type { FastifyInstance, FastifyReply } from 'fastify'
import { errors } from '../../errors.js'
import { BATCH_BODY_LIMIT, BATCH_MAX_ITEMS, createPlants, deletePlants } from '../../plants/batch.js'
import type { IdempotentCreates } from '../../plants/idempotency.js'
import type { NewPlant } from '../../plants/model.js'
import type { Store } from '../../store/types.js'
import { parseIdempotencyKey } from '../idempotency-key.js'
import { plainJsonOnly } from '../json-body.js'
import { BODY_ERRORS, errorResponses, ref } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'
import { CreateHeaders, changeBy, PLANT_FIELD_ERRORS, sendRecorded } from './plants.js'

const LIMIT_SAID = `Up to ${BATCH_MAX_ITEMS} items, all or nothing, in one transaction. The body may be up to ${BATCH_BODY_LIMIT} bytes whatever the service-wide body limit (\`--body-limit\`, when that is larger, applies instead): ${BATCH_MAX_ITEMS} plants with the longest id, name and tag, in four-byte characters, with room for indentation.`

function sendJson(reply: FastifyReply, body: string) {
  return reply.type('application/json; charset=utf-8').send(body)
}

/** POST /plants/batch and POST /plants/batch-delete: many plants created or deleted at once. */
export async function plantBatchRoutes(
  app: FastifyInstance,
  { store, idempotency }: { store: Store; idempotency: IdempotentCreates },
): Promise<void> {
  const bodyLimit = Math.max(app.initialConfig.bodyLimit ?? 0, BATCH_BODY_LIMIT)

  app.post(
    '/plants/batch',
    {
      config: { scope: 'plants:write' },
      bodyLimit,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'createPlants',
        summary: 'Creates many plants at once, all or none',
        description: `${LIMIT_SAID} Each plant raises its own plant.created event. An invalid item is 400, an id repeated in the batch (40903) or already stored (40901) is 409; the message names the first offending item by its index, counted from 0.`,
        tags: ['plants'],
        headers: CreateHeaders,
        body: ref('NewPlants'),
        response: {
          200: ref('StoredPlants', {
            description: 'The plants created, in the order sent',
            headers: { 'Idempotent-Replayed': { type: 'string', description: '"true" on a replay' } },
          }),
          ...errorResponses(
            ...BODY_ERRORS,
            errors.BATCH_PLANTS_INVALID,
            errors.ID_MISSING,
            ...PLANT_FIELD_ERRORS,
            errors.IDEMPOTENCY_KEY_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.PLANT_EXISTS,
            errors.IDEMPOTENCY_IN_PROGRESS,
            errors.ID_REPEATED,
            422,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const { plants } = request.body as { plants: NewPlant[] }
      const key = parseIdempotencyKey(request.headers['idempotency-key'])
      const by = changeBy(request)
      if (key === undefined) return sendJson(reply, await createPlants(store.plants, plants, by))
      const tokenId = request.principal?.tokenId as string
      return sendRecorded(reply, await idempotency.createMany(plants, tokenId, key, by))
    },
  )
  methodNotAllowed(app, '/plants/batch', ['POST'])

  app.post(
    '/plants/batch-delete',
    {
      config: { scope: 'plants:write' },
      bodyLimit,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'deletePlants',
        summary: 'Deletes many plants at once, all or none',
        description: `${LIMIT_SAID} Each plant deleted raises its own plant.deleted event. An id no plant has is 404 naming it, unless \`allowMissing\` is true; an id repeated in the batch is 409 (40903).`,
        tags: ['plants'],
        body: ref('PlantDeletion'),
        response: {
          200: ref('DeletedPlants', { description: 'The ids deleted, in the order sent' }),
          ...errorResponses(
            ...BODY_ERRORS,
            errors.BATCH_IDS_INVALID,
            errors.ID_INVALID,
            errors.ALLOW_MISSING_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.PLANT_NOT_FOUND,
            errors.ID_REPEATED,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const { ids, allowMissing } = request.body as { ids: bigint[]; allowMissing?: boolean }
      return sendJson(reply, await deletePlants(store.plants, ids, allowMissing === true, changeBy(request)))
    },
  )
  methodNotAllowed(app, '/plants/batch-delete', ['POST'])
}
