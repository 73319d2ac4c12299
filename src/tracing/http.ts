// Loaded only when tracing is on (see serve-requests.ts).
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { ATTR_URL_PATH } from '@opentelemetry/semantic-conventions'
import type { FastifyPluginCallback } from 'fastify'
import { addRequestBindings } from '../log.js'
import { redactTokens } from '../redact.js'

/**
 * The request spans: @fastify/otel's, one per request, named `METHOD /route/:template` and carrying
 * the route template, method and status, plus one for the route's handler, under which the store's
 * spans nest. An incoming `traceparent` is continued. What the plugin would record beyond that is
 * cut here: the URL it takes as the path keeps its query (`?access_token=…`), so the path is set
 * again without it and with any token in it redacted; exceptions are not recorded (their messages
 * and stacks can quote a body); and no span per hook, which would say little and cost a span each.
 * The request's log lines then carry its trace and span ids beside its request id.
 */
export function httpTracing(): FastifyPluginCallback {
  const instrumentation = new FastifyOtelInstrumentation({
    recordExceptions: false,
    instrumentHooks: false,
    instrumentHandler: true,
    requestHook: (span, request) => {
      const route = request.routeOptions.url
      span.updateName(route === undefined ? request.method : `${request.method} ${route}`)
      const query = request.url.indexOf('?')
      span.setAttribute(ATTR_URL_PATH, redactTokens(query === -1 ? request.url : request.url.slice(0, query)))
      const { traceId, spanId } = span.spanContext()
      addRequestBindings(request.log, { traceId, spanId })
    },
  })
  return instrumentation.plugin() as FastifyPluginCallback
}
