import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import type { Store } from '../../store/types.js'
import { sendError } from '../errors.js'
import { errorResponses } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

export interface Lifecycle {
  /** Set from the moment shutdown begins, so load balancers stop sending before the port closes. */
  draining: boolean
}

const Status = Type.Object({ status: Type.String() })

export async function healthRoutes(
  app: FastifyInstance,
  { store, lifecycle }: { store: Store; lifecycle: Lifecycle },
): Promise<void> {
  app.get(
    '/healthz',
    {
      // Liveness is answered even while load is shed: a busy process is not a dead one.
      config: { pressureHandler: () => undefined },
      schema: {
        operationId: 'health',
        summary: 'Liveness: the process is up',
        tags: ['operations'],
        security: [],
        response: { 200: Status },
      },
    },
    async () => ({ status: 'ok' }),
  )

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'ready',
        summary: 'Readiness: the database answers and the instance is not draining',
        tags: ['operations'],
        security: [],
        response: { 200: Status, ...errorResponses(503) },
      },
    },
    async (request, reply) => {
      if (lifecycle.draining) {
        return sendError(reply, errors.UNAVAILABLE, 'The instance is shutting down.', { 'retry-after': '1' })
      }
      try {
        await store.ping()
      } catch (error) {
        request.log.warn({ err: error }, 'database ping failed')
        return sendError(reply, errors.UNAVAILABLE, 'The database is unreachable.', { 'retry-after': '1' })
      }
      return { status: 'ready' }
    },
  )
  methodNotAllowed(app, '/healthz', ['GET', 'HEAD'])
  methodNotAllowed(app, '/readyz', ['GET', 'HEAD'])
}
