import type { FastifyBaseLogger } from 'fastify'
import type { Metrics } from './metrics/registry.js'
import { type Store, SWEPT_KINDS } from './store/types.js'

export interface RetentionSettings {
  eventsRetentionMs: number
  tokensRetentionMs: number
  /** 0: never sweep. */
  retentionIntervalMs: number
  /** 0: never checkpoint (SQLite's automatic passive checkpoints still run). */
  walCheckpointIntervalMs: number
}

/** One sweep with the settings' cutoffs, as of `now`: rows deleted, by kind. */
export async function sweepOnce(
  store: Store,
  settings: RetentionSettings,
  now = new Date(),
  signal?: AbortSignal,
) {
  const counts = await store.maintenance.sweep({
    now,
    eventsBefore: new Date(now.getTime() - settings.eventsRetentionMs),
    tokensBefore: new Date(now.getTime() - settings.tokensRetentionMs),
    ...(signal ? { signal } : {}),
  })
  // Requests purge expired keys now and then too, but only while creates with keys keep coming.
  counts.idempotency_keys = await store.idempotency.purgeExpired(now, signal)
  return counts
}

/**
 * Runs the retention sweep (once soon after start, then every interval) and the WAL checkpoint on
 * their schedules until the returned stop is called. A run that fails is logged and retried at the
 * next tick; runs never overlap. Stop starts no further run, ends a sweep before its next chunk, and
 * resolves once the run under way has ended, so the store can be closed after it.
 */
export function scheduleRetention(
  store: Store,
  settings: RetentionSettings,
  logger: FastifyBaseLogger,
  metrics?: Metrics,
): () => Promise<void> {
  const timers: NodeJS.Timeout[] = []
  const stopping = new AbortController()
  const runs = new Set<Promise<void>>()
  const every = (ms: number, name: string, job: () => Promise<void>, runAtStart: boolean) => {
    if (ms <= 0) return
    let running = false
    const run = () => {
      if (running || stopping.signal.aborted) return
      running = true
      const done = job()
        .catch((err: unknown) => {
          if (!stopping.signal.aborted) logger.warn({ err }, `${name} failed`)
        })
        .finally(() => {
          running = false
          runs.delete(done)
        })
      runs.add(done)
    }
    const timer = setInterval(run, ms)
    timer.unref()
    timers.push(timer)
    if (runAtStart) {
      const first = setTimeout(run, 1000)
      first.unref()
      timers.push(first)
    }
  }
  // Each kind's series exists from the start at 0, so a rate() over it has a baseline.
  for (const kind of SWEPT_KINDS) metrics?.retentionDeleted.inc({ kind }, 0)
  every(
    settings.retentionIntervalMs,
    'retention sweep',
    async () => {
      const counts = await sweepOnce(store, settings, new Date(), stopping.signal)
      for (const [kind, deleted] of Object.entries(counts)) {
        if (deleted > 0) metrics?.retentionDeleted.inc({ kind }, deleted)
      }
      logger.info({ deleted: counts }, 'retention sweep done')
    },
    true,
  )
  every(settings.walCheckpointIntervalMs, 'WAL checkpoint', () => store.maintenance.checkpoint(), false)
  return async () => {
    stopping.abort()
    for (const timer of timers) clearInterval(timer)
    await Promise.all(runs)
  }
}
