import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import type { Store } from '../../store/types.js'
import { sendError } from '../errors.js'
import type { FailureLog } from '../failure-log.js'
import { errorResponses } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

export interface Lifecycle {
  /** Set from the moment shutdown begins, so load balancers stop sending before the port closes. */
  draining: boolean
}

/** The response of a health check; the description says what it means for the operation's caller. */
const Status = (description: string) => Type.Object({ status: Type.String() }, { description })

export async function healthRoutes(
  app: FastifyInstance,
  { store, lifecycle, failures }: { store: Store; lifecycle: Lifecycle; failures: FailureLog },
): Promise<void> {
  app.get(
    '/healthz',
    {
      // Liveness responds even while load is shed: a busy process is not a dead one.
      config: { pressureHandler: () => undefined },
      // A health response is a few bytes: compressing it would cost more than it saves.
      compress: false,
      schema: {
        operationId: 'health',
        summary: 'Liveness: the process is up',
        tags: ['operations'],
        security: [],
        response: { 200: Status('The process is up: `{"status": "ok"}`') },
      },
    },
    async () => ({ status: 'ok' }),
  )

  app.get(
    '/readyz',
    {
      compress: false,
      schema: {
        operationId: 'ready',
        summary: 'Readiness: the database answers and the instance is not draining',
        tags: ['operations'],
        security: [],
        response: {
          200: Status('Ready to serve: `{"status": "ready"}`'),
          ...errorResponses(503),
        },
      },
    },
    async (request, reply) => {
      if (lifecycle.draining) {
        return sendError(reply, errors.UNAVAILABLE, 'The instance is shutting down.', { 'retry-after': '1' })
      }
      try {
        await store.ping()
      } catch (error) {
        // A load balancer probes every second or so: during an outage its probes share the requests'
        // one line per window instead of writing one each.
        const message = 'The database is unreachable.'
        failures.write(request.log, error, { entry: errors.UNAVAILABLE, message })
        return sendError(reply, errors.UNAVAILABLE, message, { 'retry-after': '1' })
      }
      return { status: 'ready' }
    },
  )
  methodNotAllowed(app, '/healthz', ['GET', 'HEAD'])
  methodNotAllowed(app, '/readyz', ['GET', 'HEAD'])
}
