import type { Store } from '../store/types.js'
import type { Metrics } from './registry.js'

const TIMED_PARTS = ['plants', 'tokens', 'events', 'idempotency', 'maintenance'] as const

function timed<T extends object>(target: T, part: string, metrics: Metrics): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver)
      if (typeof value !== 'function' || typeof property !== 'string') return value
      const operation = `${part}.${property}`
      return (...args: unknown[]) => {
        const start = process.hrtime.bigint()
        const observe = (outcome: 'ok' | 'error') =>
          metrics.dbDuration.observe({ operation, outcome }, Number(process.hrtime.bigint() - start) / 1e9)
        const result: unknown = value.apply(object, args)
        // Only asynchronous calls are database round trips; synchronous helpers (the revocation epoch
        // check on every request) are too cheap to be worth a histogram update.
        if (result instanceof Promise) {
          return result.then(
            (v: unknown) => {
              observe('ok')
              return v
            },
            (error: unknown) => {
              observe('error')
              throw error
            },
          )
        }
        return result
      }
    },
  })
}

/**
 * The same store with each asynchronous repository call timed into
 * plantstore_db_operation_duration_seconds. It wraps the interface, so it times any implementation.
 */
export function timeStore(store: Store, metrics: Metrics): Store {
  const parts = Object.fromEntries(TIMED_PARTS.map((part) => [part, timed(store[part], part, metrics)]))
  return new Proxy(store, {
    get(object, property, receiver) {
      if (typeof property === 'string' && property in parts) return parts[property]
      const value = Reflect.get(object, property, receiver)
      return typeof value === 'function' ? value.bind(object) : value
    },
  })
}
