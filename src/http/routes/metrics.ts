import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import type { Metrics } from '../../metrics/registry.js'
import { errorResponses } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

export interface MetricsRouteOptions {
  metrics: Metrics
  /** The exposition text: this process's registry, or a cluster worker's view of every worker. */
  scrape: () => Promise<string>
}

export async function metricsRoutes(
  app: FastifyInstance,
  { metrics, scrape }: MetricsRouteOptions,
): Promise<void> {
  app.get(
    '/metrics',
    {
      config: { scope: 'metrics:read' },
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics of this instance, every worker of it together (text exposition format)',
        tags: ['operations'],
        response: {
          200: {
            description: 'Every series of this instance, in the Prometheus text exposition format 0.0.4',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...errorResponses(401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (_request, reply) => {
      const text = await scrape()
      reply.type(metrics.registry.contentType)
      return text
    },
  )
  methodNotAllowed(app, '/metrics', ['GET', 'HEAD'])
}
