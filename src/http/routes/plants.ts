import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { AppError, errors } from '../../errors.js'
import { parseInt64 } from '../../plants/int64.js'
import type { NewPlant as NewPlantValue } from '../../plants/model.js'
import { createPlant, getPlant } from '../../plants/service.js'
import { validateNewPlant } from '../../plants/validate.js'
import type { Store } from '../../store/types.js'
import { errorResponses, NewPlant, PlantId, StoredPlant } from '../schemas.js'
import { checkedBy } from '../validation.js'
import { methodNotAllowed } from './method-not-allowed.js'

const PlantIdParams = checkedBy(Type.Object({ id: PlantId }), (params) => {
  const id = parseInt64(String((params as { id?: unknown }).id))
  if (id === null) throw new AppError(errors.PATH_ID_INVALID)
  return { id }
})

const CreateBody = checkedBy(NewPlant, validateNewPlant)

export async function plantRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.post(
    '/plants',
    {
      config: { scope: 'plants:write' },
      schema: {
        operationId: 'createPlant',
        summary: 'Creates a new plant in the store',
        tags: ['plants'],
        body: CreateBody,
        response: {
          200: { ...StoredPlant, description: 'Plant response: the stored plant, id included' },
          ...errorResponses(400, 401, 403, 409, 413, 415, 500),
        },
      },
    },
    async (request) => createPlant(store.plants, request.body as NewPlantValue),
  )
  methodNotAllowed(app, '/plants', ['POST'])

  app.get(
    '/plants/:id',
    {
      config: { scope: 'plants:read' },
      schema: {
        operationId: 'getPlant',
        summary: 'Reads one plant',
        tags: ['plants'],
        params: PlantIdParams,
        response: { 200: StoredPlant, ...errorResponses(400, 401, 403, 404, 500) },
      },
    },
    async (request) => getPlant(store.plants, (request.params as { id: bigint }).id),
  )
  methodNotAllowed(app, '/plants/:id', ['GET', 'HEAD'])
}
