import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify'
import { type Metrics, methodLabel, UNMATCHED_ROUTE } from '../metrics/registry.js'
import type { QuietRequestLog } from './request-log.js'

/** Counts and times one response of a route: its status and the seconds taken. */
export type RouteRecorder = (status: number, seconds: number) => void

/** The recorders of every route and method, each made once. */
export interface RequestRecorder {
  /** The recorder of one method of a route (its template, `/plants/:id`, or UNMATCHED_ROUTE). */
  of(method: string, route: string): RouteRecorder
}

/**
 * Counts and times completed requests by their route template (`/plants/:id`, never the concrete
 * URL), so the number of series is fixed by the routes, not by what clients send. The labelled
 * children of one route, method and status are made once and kept, not looked up per response.
 */
export function requestRecorder(metrics: Metrics): RequestRecorder {
  const routes = new Map<string, RouteRecorder>()
  return {
    of(method, route) {
      const key = `${method} ${route}`
      let recorder = routes.get(key)
      if (recorder === undefined) {
        recorder = routeRecorder(metrics, method, route)
        routes.set(key, recorder)
      }
      return recorder
    },
  }
}

function routeRecorder(metrics: Metrics, method: string, route: string): RouteRecorder {
  const byStatus = new Map<number, { count: () => void; observe: (seconds: number) => void }>()
  return (status, seconds) => {
    let series = byStatus.get(status)
    if (series === undefined) {
      const labels = { method, route, status: String(status) }
      const counter = metrics.httpRequests.labels(labels)
      const histogram = metrics.httpDuration.labels(labels)
      series = { count: () => counter.inc(), observe: (s) => histogram.observe(s) }
      byStatus.set(status, series)
    }
    series.count()
    series.observe(seconds)
  }
}

/**
 * Records every response of every route, by a hook of the route's own that knows its method and
 * template from the start: nothing is looked up per request but the status. Routes registered after
 * this call are recorded; a request no route matched is recorded by recordUnknownRoute.
 */
export function recordRequestMetrics(app: FastifyInstance, recorder: RequestRecorder): void {
  app.addHook('onRoute', (route) => {
    const url = route.url ?? UNMATCHED_ROUTE
    const record: onResponseHookHandler =
      typeof route.method === 'string'
        ? onResponseOf(recorder.of(methodLabel(route.method), url))
        : (request, reply, done) => {
            recorder.of(methodLabel(request.method), url)(reply.statusCode, reply.elapsedTime / 1000)
            done()
          }
    route.onResponse = [route.onResponse ?? []].flat().concat(record)
  })
}

function onResponseOf(record: RouteRecorder): onResponseHookHandler {
  return (_request, reply, done) => {
    record(reply.statusCode, reply.elapsedTime / 1000)
    done()
  }
}

/**
 * Records the response to a request no route matched (Fastify's not-found context has no route of
 * its own to hook), once it is written.
 */
export function recordUnknownRoute(
  request: FastifyRequest,
  reply: FastifyReply,
  recorder: RequestRecorder,
): void {
  const record = recorder.of(methodLabel(request.method), UNMATCHED_ROUTE)
  reply.raw.once('finish', () => record(reply.statusCode, reply.elapsedTime / 1000))
}

/**
 * Counts and logs a response given before routing, which no hook sees, as a request no route matched.
 * Fastify starts a reply's clock only past routing, so reply.elapsedTime is 0 here: timed from now,
 * which is as good as from arrival, the router having just given up.
 */
export function recordUnrouted(
  request: FastifyRequest,
  reply: FastifyReply,
  recorder: RequestRecorder,
  log: QuietRequestLog,
): void {
  const started = performance.now()
  const record = recorder.of(methodLabel(request.method), UNMATCHED_ROUTE)
  reply.raw.once('finish', () => {
    const ms = performance.now() - started
    record(reply.statusCode, ms / 1000)
    log.requestCompleted(undefined, request, reply, { ms })
  })
}
