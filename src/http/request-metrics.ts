import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Metrics, methodLabel, UNMATCHED_ROUTE } from '../metrics/registry.js'
import type { QuietRequestLog } from './request-log.js'

/** Counts and times one answer: method, route template, status and seconds taken. */
export type RequestRecorder = (method: string, route: string, status: number, seconds: number) => void

/**
 * Counts and times answered requests by their route template (`/plants/:id`, never the concrete
 * URL), so the number of series is fixed by the routes, not by what clients send. The children of one
 * route, method and status are made once and kept: a Map lookup by one string costs less than
 * building the label object again for every answer.
 */
export function requestRecorder(metrics: Metrics): RequestRecorder {
  const series = new Map<string, { count: () => void; observe: (seconds: number) => void }>()
  return (method, route, status, seconds) => {
    const key = `${method} ${status} ${route}`
    let found = series.get(key)
    if (!found) {
      const labels = { method, route, status: String(status) }
      const counter = metrics.httpRequests.labels(labels)
      const histogram = metrics.httpDuration.labels(labels)
      found = { count: () => counter.inc(), observe: (s) => histogram.observe(s) }
      series.set(key, found)
    }
    found.count()
    found.observe(seconds)
  }
}

/** Records every answer Fastify sends. */
export function recordRequestMetrics(app: FastifyInstance, record: RequestRecorder): void {
  app.addHook('onResponse', (request, reply, done) => {
    record(
      methodLabel(request.method),
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    )
    done()
  })
}

/**
 * Counts and logs an answer given before routing, which no hook sees, as a request no route matched.
 * Fastify starts a reply's clock only past routing, so reply.elapsedTime is 0 here: timed from now,
 * which is as good as from arrival, the router having just given up.
 */
export function recordUnrouted(
  request: FastifyRequest,
  reply: FastifyReply,
  record: RequestRecorder,
  log: QuietRequestLog,
): void {
  const started = performance.now()
  reply.raw.once('finish', () => {
    const ms = performance.now() - started
    record(methodLabel(request.method), UNMATCHED_ROUTE, reply.statusCode, ms / 1000)
    log.requestCompleted(undefined, request, reply, { ms })
  })
}
