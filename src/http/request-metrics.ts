import type { FastifyInstance } from 'fastify'
import { bindCounter, bindHistogram } from '../metrics/bound.js'
import { type Metrics, methodLabel, UNMATCHED_ROUTE } from '../metrics/registry.js'

/**
 * Counts and times every answered request by its route template (`/plants/:id`, never the concrete
 * URL), so the number of series is fixed by the routes, not by what clients send.
 */
export function recordRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  // The series of one route, method and status are bound once and kept (see metrics/bound.ts). Their
  // number is bounded by the routes, as the labels are.
  const series = new Map<string, { count: () => void; observe: (seconds: number) => void }>()
  app.addHook('onResponse', (request, reply, done) => {
    const method = methodLabel(request.method)
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE
    const key = `${method} ${reply.statusCode} ${route}`
    let found = series.get(key)
    if (!found) {
      const labels = { method, route, status: String(reply.statusCode) }
      const counter = bindCounter(metrics.httpRequests, labels)
      const histogram = bindHistogram(metrics.httpDuration, labels)
      found = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) }
      series.set(key, found)
    }
    found.count()
    found.observe(reply.elapsedTime / 1000)
    done()
  })
}
