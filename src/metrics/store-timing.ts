import type { Store } from '../store/types.js'
import { withParts, wrapMethods } from '../store/wrap-methods.js'
import type { Metrics } from './registry.js'

const TIMED_PARTS = ['plants', 'tokens', 'events', 'idempotency', 'maintenance'] as const

function timed<T extends object>(target: T, part: string, metrics: Metrics): T {
  // One wrapper per method and one labelled child per outcome, made on first use: the request path
  // then allocates neither a closure nor a label set per call.
  const wrap = (method: (...args: unknown[]) => unknown, operation: string) => {
    // Made at the first asynchronous call: made with the wrapper, a synchronous helper (the
    // revocation epoch check, events.watch) showed as an operation that never ran, at 0 forever.
    let series: { ok: { observe(s: number): void }; failed: { observe(s: number): void } } | undefined
    return function (this: unknown, ...args: unknown[]): unknown {
      const start = performance.now()
      const result: unknown = method.apply(target, args)
      // Only asynchronous calls are database round trips; synchronous helpers (the revocation epoch
      // check) are too cheap to be worth a histogram update.
      if (!(result instanceof Promise)) return result
      if (!series) {
        // The error series exists from the start at 0, so a rate() over it or an alert on it has a
        // baseline; nothing has observed it yet, as this wrapper is the operation's only one.
        metrics.dbDuration.zero({ operation, outcome: 'error' })
        series = {
          ok: metrics.dbDuration.labels({ operation, outcome: 'ok' }),
          failed: metrics.dbDuration.labels({ operation, outcome: 'error' }),
        }
      }
      const { ok, failed } = series
      return result.then(
        (value: unknown) => {
          ok.observe((performance.now() - start) / 1000)
          return value
        },
        (error: unknown) => {
          failed.observe((performance.now() - start) / 1000)
          throw error
        },
      )
    }
  }
  return wrapMethods(target, (method, name) => wrap(method, `${part}.${name}`))
}

/**
 * The same store with each asynchronous repository call timed into
 * plantstore_db_operation_duration_seconds. It wraps the interface, so it times any implementation.
 */
export function timeStore(store: Store, metrics: Metrics): Store {
  const parts = Object.fromEntries(TIMED_PARTS.map((part) => [part, timed(store[part], part, metrics)]))
  return withParts(store, parts)
}
