import { type Observer, observeStore } from '../store/observed.js'
import type { Store } from '../store/types.js'
import type { Metrics } from './registry.js'

type Observed = { observe(seconds: number): void }

/**
 * Times each call into plantstore_db_operation_duration_seconds under its operation. The series of an
 * operation are made at its first call, not before: an operation nothing calls has no series.
 */
export function storeTiming(metrics: Metrics): Observer {
  return (operation) => {
    let series: { ok: Observed; failed: Observed } | undefined
    return (call) => {
      const start = performance.now()
      if (series === undefined) {
        // The error series exists from the operation's first call at 0, so a rate() over it or an
        // alert on it has a baseline; this observer is the operation's only one, so nothing is wiped.
        metrics.dbDuration.zero({ operation, outcome: 'error' })
        series = {
          ok: metrics.dbDuration.labels({ operation, outcome: 'ok' }),
          failed: metrics.dbDuration.labels({ operation, outcome: 'error' }),
        }
      }
      const { ok, failed } = series
      let pending: ReturnType<typeof call>
      try {
        pending = call()
      } catch (error) {
        failed.observe((performance.now() - start) / 1000)
        throw error
      }
      return pending.then(
        (value) => {
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
}

/**
 * The same store with each asynchronous call of the parts a request or the retention sweep waits on
 * timed into plantstore_db_operation_duration_seconds. It observes the interface, so it times any
 * implementation.
 */
export function timeStore(store: Store, metrics: Metrics): Store {
  return observeStore(store, storeTiming(metrics), [
    'plants',
    'tokens',
    'events',
    'idempotency',
    'maintenance',
  ])
}
