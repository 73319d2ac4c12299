// Loaded only when tracing is on (see serve-requests.ts).
import * as api from '@opentelemetry/api'
import { type Observer, observeStore } from '../store/observed.js'
import type { Store } from '../store/types.js'
import { endSpan } from './active.js'

/**
 * A span for each call a traced request waits on, named for its operation, under the request's span.
 * Background work (the dispatcher's queue, the retention sweep) has no request span and gets none: it
 * would be a trace of its own per poll.
 */
export function storeSpans(system: 'sqlite' | 'postgresql', tracer: api.Tracer): Observer {
  return (operation) => {
    const options: api.SpanOptions = {
      kind: api.SpanKind.CLIENT,
      attributes: { 'db.system.name': system, 'db.operation.name': operation },
    }
    return (call) => {
      const parent = api.context.active()
      if (api.trace.getSpan(parent) === undefined) return call()
      const span = tracer.startSpan(operation, options, parent)
      let pending: ReturnType<typeof call>
      try {
        pending = api.context.with(api.trace.setSpan(parent, span), call)
      } catch (error) {
        endSpan(span, error)
        throw error
      }
      return pending.then(
        (value) => {
          span.end()
          return value
        },
        (error: unknown) => {
          endSpan(span, error)
          throw error
        },
      )
    }
  }
}

/**
 * The same store with a span for each call a traced request makes: `plants.create`, `tokens.find`,
 * and so on. It observes the interface, so it serves either database; only ever applied while tracing
 * is on, so the request path without tracing has no span code at all.
 */
export function traceStore(store: Store, system: 'sqlite' | 'postgresql'): Store {
  return observeStore(store, storeSpans(system, api.trace.getTracer('plantstore')), [
    'plants',
    'tokens',
    'idempotency',
    'webhooks',
  ])
}
