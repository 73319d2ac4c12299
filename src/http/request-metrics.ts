import type { FastifyInstance } from 'fastify'
import { type Metrics, methodLabel, UNMATCHED_ROUTE } from '../metrics/registry.js'

/**
 * Counts and times every answered request by its route template (`/plants/:id`, never the concrete
 * URL), so the number of series is fixed by the routes, not by what clients send.
 */
export function recordRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: methodLabel(request.method),
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status: String(reply.statusCode),
    }
    metrics.httpRequests.inc(labels)
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000)
  })
}
