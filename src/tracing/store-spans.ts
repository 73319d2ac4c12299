// Loaded only when tracing is on (see serve-requests.ts).
import * as api from '@opentelemetry/api'
import type { Store } from '../store/types.js'
import { withParts, wrapMethods } from '../store/wrap-methods.js'
import { endSpan } from './active.js'

const TRACED_PARTS = ['plants', 'tokens', 'idempotency', 'webhooks'] as const
/** Synchronous helpers, asked on every request: no store work to show. */
const UNTRACED = new Set(['revocationEpoch', 'watch'])

function traced<T extends object>(target: T, part: string, system: string, tracer: api.Tracer): T {
  const wrap = (method: (...args: unknown[]) => unknown, operation: string) =>
    function (this: unknown, ...args: unknown[]): unknown {
      // Only the store work a request waits for: background work (the dispatcher's queue, the
      // retention sweep) would be a trace of its own per poll.
      const parent = api.context.active()
      if (api.trace.getSpan(parent) === undefined) return method.apply(target, args)
      const span = tracer.startSpan(
        operation,
        {
          kind: api.SpanKind.CLIENT,
          attributes: { 'db.system.name': system, 'db.operation.name': operation },
        },
        parent,
      )
      let result: unknown
      try {
        result = api.context.with(api.trace.setSpan(parent, span), () => method.apply(target, args))
      } catch (error) {
        endSpan(span, error)
        throw error
      }
      if (!(result instanceof Promise)) {
        span.end()
        return result
      }
      return result.then(
        (value: unknown) => {
          span.end()
          return value
        },
        (error: unknown) => {
          endSpan(span, error)
          throw error
        },
      )
    }
  return wrapMethods(target, (method, name) => wrap(method, `${part}.${name}`), UNTRACED)
}

/**
 * The same store with a span for each call a traced request makes: `plants.create`, `tokens.find`,
 * and so on, under the request's span. It wraps the interface, so it serves either database; only
 * ever applied while tracing is on, so the request path without tracing has no wrapper at all.
 */
export function traceStore(store: Store, system: 'sqlite' | 'postgresql'): Store {
  const tracer = api.trace.getTracer('plantstore')
  const parts = Object.fromEntries(
    TRACED_PARTS.map((part) => [part, traced(store[part], part, system, tracer)]),
  )
  return withParts(store, parts)
}
