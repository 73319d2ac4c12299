import type * as Api from '@opentelemetry/api'
import type { Attributes, Span, SpanKind, Tracer } from '@opentelemetry/api'

/**
 * The tracer while tracing is on, in this thread. Code on the request path asks `tracing` first and
 * does nothing more when it is undefined: with tracing off no span object is made and nothing of
 * OpenTelemetry is even loaded (this module imports only its types). sdk.ts sets it.
 */
export interface Tracing {
  api: typeof Api
  tracer: Tracer
}

let tracing: Tracing | undefined

export function useTracing(on: Tracing | undefined): void {
  tracing = on
}

export function tracingInUse(): Tracing | undefined {
  return tracing
}

/** The span the current code runs in, when tracing is on. */
export function activeSpan(): Span | undefined {
  return tracing?.api.trace.getActiveSpan()
}

/**
 * The W3C `traceparent` of the span the current code runs in, to store with what it causes (an
 * outbox event), so that later work (a webhook attempt) can link back to it. Undefined when tracing
 * is off or nothing is being traced.
 */
export function currentTraceparent(): string | undefined {
  if (!tracing) return undefined
  const { api } = tracing
  if (api.trace.getActiveSpan() === undefined) return undefined
  const carrier: Record<string, string> = {}
  api.propagation.inject(api.context.active(), carrier)
  return carrier.traceparent
}

/** A span started as a child of the current one, or undefined when tracing is off. */
export function startSpan(name: string, attributes?: Attributes, kind?: SpanKind): Span | undefined {
  return tracing?.tracer.startSpan(name, { attributes, kind })
}

/** Runs `work` with `span` as the current span (or as it is, when there is none). */
export function inSpan<T>(span: Span | undefined, work: () => T): T {
  if (!tracing || !span) return work()
  const { api } = tracing
  return api.context.with(api.trace.setSpan(api.context.active(), span), work)
}

/** Ends the span, marked failed when `error` is given; its message stays out (it may quote input). */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return
  if (error !== undefined && tracing) {
    span.setStatus({ code: tracing.api.SpanStatusCode.ERROR })
    span.setAttribute('error.type', errorType(error))
  }
  span.end()
}

/** A failure's kind, never its message: a message can quote a body, a URL or a value. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown })?.code
  if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) return code
  return error instanceof Error ? error.name : 'Error'
}
