import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Metrics } from '../../metrics/registry.js'
import { errorResponses } from '../schemas.js'

export async function metricsRoutes(app: FastifyInstance, { metrics }: { metrics: Metrics }): Promise<void> {
  app.get(
    '/metrics',
    {
      config: { scope: 'metrics:read' },
      schema: {
        operationId: 'metrics',
        summary: 'Prometheus metrics of this instance (text exposition format)',
        tags: ['operations'],
        response: {
          200: {
            description: 'Every series of this instance, in the Prometheus text exposition format 0.0.4',
            content: { 'text/plain': { schema: Type.String() } },
          },
          ...errorResponses(401, 403),
        },
      },
    },
    async (_request, reply) => {
      reply.type(metrics.registry.contentType)
      return metrics.registry.metrics()
    },
  )
}
