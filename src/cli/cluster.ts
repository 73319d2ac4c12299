import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'
import type { ServeConfig } from '../config.js'

// A worker that dies this soon after starting is not restarted: it would only die again.
const MIN_UPTIME_MS = 5_000

/**
 * The cluster primary of `serve --workers N`: it forks N workers that share the listening port (Node
 * hands each accepted connection to one of them in turn), announces the address once all of them
 * are ready, replaces a worker that crashes, and on SIGTERM/SIGINT stops them all and exits 0 when
 * every one of them stopped cleanly. It serves no request and holds no database connection.
 *
 * State that must agree across workers lives in the database, never in a worker's memory: token
 * revocation (each worker sees the store's revocation epoch move) and, for the features that need
 * it, a lease row. Anything to be aggregated over workers (e.g. metrics) goes through this
 * process: worker.on('message') below is where it arrives.
 */
export async function runPrimary(config: ServeConfig, logger: Logger): Promise<void> {
  let stopping = false
  let ready = 0
  const startedAt = new Map<Worker, number>()

  const fork = (): Worker => {
    const worker = cluster.fork()
    startedAt.set(worker, Date.now())
    return worker
  }

  cluster.on('listening', (_worker, address) => {
    ready += 1
    if (ready !== config.workers) return
    const host = address.address ?? config.host
    const shown = host.includes(':') ? `[${host}]` : host
    const pids = Object.values(cluster.workers ?? {}).map((w) => w?.process.pid)
    logger.info({ workers: pids }, `listening on http://${shown}:${address.port}`)
  })

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0)
    startedAt.delete(worker)
    if (stopping) return
    logger.error({ pid: worker.process.pid, code, signal }, 'worker exited')
    if (lived < MIN_UPTIME_MS) {
      logger.fatal('a worker failed right after starting; stopping')
      void stop('worker failure', 1)
      return
    }
    fork()
  })

  const stop = async (reason: string, exitCode = 0) => {
    if (stopping) return
    stopping = true
    logger.info({ signal: reason }, 'shutting down workers')
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
    // A worker still starting has no handler yet and dies of the signal itself: it had served
    // nothing, so that is a clean stop too.
    const exits = workers.map(
      (w) =>
        new Promise<number>((resolve) => {
          if (w.isDead()) resolve(w.process.exitCode ?? 1)
          else
            w.once('exit', (code: number | null, signal: string | null) =>
              resolve(signal === 'SIGTERM' ? 0 : (code ?? 1)),
            )
        }),
    )
    for (const w of workers) w.process.kill('SIGTERM')
    // Each worker enforces --shutdown-timeout itself; this is the backstop if one hangs anyway.
    const backstop = setTimeout(() => {
      logger.error('workers did not stop in time')
      for (const w of workers) w.process.kill('SIGKILL')
    }, config.shutdownTimeoutMs + 2_000)
    backstop.unref()
    const codes = await Promise.all(exits)
    clearTimeout(backstop)
    const clean = codes.every((code) => code === 0)
    logger.info({ codes }, 'stopped')
    process.exit(clean ? exitCode : 1)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  for (let i = 0; i < config.workers; i++) fork()
}
