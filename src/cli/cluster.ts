import cluster, { type Worker } from 'node:cluster'
import { once } from 'node:events'
import { type AddressInfo, createServer } from 'node:net'
import type { Logger } from 'pino'
import type { ServeConfig } from '../config.js'
import { addressLogger } from '../log.js'
import { ClusterMetricsPrimary } from '../metrics/cluster.js'
import { RestartBackoff } from '../restart-backoff.js'
import { reportOnStderr } from './report.js'

/**
 * The signals that stop `serve` cleanly (drain, then exit 0). SIGHUP is among them because a
 * terminal that closes sends it to the whole job: Node's default would end the process on the spot,
 * its requests in flight without a response, and Node also undoes the SIG_IGN that `nohup` sets, so there is
 * no keeping a server alive through it anyway.
 */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

export interface RunningCluster {
  /** Resolves with the address once every worker listens. */
  ready: Promise<string>
  /** Stops every worker; resolves 0 when all of them stopped cleanly, else 1. */
  stop(reason: string): Promise<number>
  /** Resolves with the exit code the primary should end with (after stop, or a failing worker). */
  done: Promise<number>
}

/** How the primary gives its workers the port to listen on. */
const WORKER_PORT_ENV = 'PLANTSTORE_WORKER_PORT'

/**
 * The port this process listens on: a worker's is the one its primary chose. With `--port 0` Node
 * would share one random port among the workers only while one of them holds it: workers that
 * replace ones that all died at once would get another, unknown to clients of the announced one.
 */
export function listenPort(config: ServeConfig): number {
  const chosen = cluster.isWorker ? process.env[WORKER_PORT_ENV] : undefined
  return chosen === undefined ? config.port : Number(chosen)
}

/** A port that is free on `host` now, as the system picks one for port 0. */
async function freePort(host: string): Promise<number> {
  const probe = createServer().listen({ port: 0, host })
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  probe.close()
  await once(probe, 'close')
  return port
}

/**
 * The cluster primary of `serve --workers N`: it forks N workers that share the listening port (Node
 * hands each accepted connection to one of them in turn), announces the address once all of them
 * are ready, replaces a worker that crashes after it listened, backing off while replacements keep
 * crashing (one that exits before it listened failed to start, and the cluster stops with code 1),
 * and stops them all on request. It serves no request and holds no database connection.
 *
 * State that must agree across workers lives in the database, never in a worker's memory: token
 * revocation (each worker sees the store's revocation epoch move) and the webhook dispatcher lease.
 * What is aggregated over workers goes through this process: GET /metrics, whichever worker takes
 * it, responds with every listening worker's series, gathered here (metrics/cluster.ts).
 */
export function startCluster(
  config: ServeConfig,
  logger: Logger,
  options: { metricsTimeoutMs?: number } = {},
): RunningCluster {
  let stopping: Promise<number> | undefined
  let failed = false
  let announced = false
  /** The workers forked at start; any other is a replacement. */
  const initial = new Set<Worker>()
  const listening = new Set<Worker>()
  /** When each listening worker started to listen. */
  const listenedAt = new Map<Worker, number>()
  // A worker that dies on every start (a request it cannot survive, a database that fails it) costs
  // a core for its whole start each time it is forked. Each worker's backoff passes to its
  // replacement and to no other: one that keeps crashing must not delay the replacement of a sibling
  // that crashed once, nor a sibling's long run reset its own wait.
  const backoffs = new Map<Worker, RestartBackoff>()
  const newBackoff = () => new RestartBackoff(100, 10_000, 30_000)
  const replacing = new Set<NodeJS.Timeout>()
  const metrics = new ClusterMetricsPrimary(() => [...listening], logger, options.metricsTimeoutMs)
  let announce: (address: string) => void = () => {}
  let finish: (code: number) => void = () => {}
  const done = new Promise<number>((resolve) => {
    finish = resolve
  })

  let port = config.port
  const fork = (backoff = newBackoff()): Worker => {
    const worker = cluster.fork({ [WORKER_PORT_ENV]: String(port) })
    backoffs.set(worker, backoff)
    return worker
  }

  const onListening = (worker: Worker, address: { address: string | null; port: number }) => {
    // A worker listens once per address its --host resolves to; it counts once.
    if (listening.has(worker)) return
    listening.add(worker)
    listenedAt.set(worker, Date.now())
    // The primary's word, not the worker's own "ready" line, says a replacement counts as having
    // served: whoever watches the log can tell a crash from a failed start by it.
    if (!initial.has(worker)) logger.info({ worker: worker.process.pid }, 'replacement worker listening')
    // Announced once N workers listen at the same time: a worker that crashed while its siblings
    // were starting, and its replacement, do not make two.
    if (announced || listening.size !== config.workers) return
    announced = true
    const host = address.address ?? config.host
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
    const pids = Object.values(cluster.workers ?? {}).map((w) => w?.process.pid)
    addressLogger(logger).info({ workers: pids }, `listening on ${url}`)
    announce(url)
  }

  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    // Readiness, not time since fork, tells a failed start from a crash: how long a start takes
    // depends on the database and the machine's load, and a worker that never listened would only
    // fail the same way again, whereas one that served was healthy and is worth replacing.
    const served = listening.delete(worker)
    const uptime = Date.now() - (listenedAt.get(worker) ?? 0)
    listenedAt.delete(worker)
    const backoff = backoffs.get(worker) ?? newBackoff()
    backoffs.delete(worker)
    if (stopping) return
    if (!served) {
      logger.error({ worker: worker.process.pid, code, signal }, 'worker exited')
      logger.fatal('a worker failed right after starting; stopping')
      failed = true
      void stop('worker failure')
      return
    }
    const replaceDelay = backoff.after(uptime)
    logger.error({ worker: worker.process.pid, code, signal, replaceInMs: replaceDelay }, 'worker exited')
    const timer = setTimeout(() => {
      replacing.delete(timer)
      if (!stopping) fork(backoff)
    }, replaceDelay)
    replacing.add(timer)
  }

  const stop = (reason: string): Promise<number> => {
    stopping ??= stopAll(reason)
    return stopping
  }

  const stopAll = async (reason: string): Promise<number> => {
    logger.info({ signal: reason }, 'shutting down workers')
    for (const timer of replacing) clearTimeout(timer)
    replacing.clear()
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined)
    // A worker still starting exits 0 at the signal, or dies of it while its modules still load
    // (SIGINT or SIGHUP too, when Ctrl-C or a hangup reached the whole process group): it had served
    // nothing, so that is a clean stop too.
    const exits = workers.map(
      (w) =>
        new Promise<number>((resolve) => {
          if (w.isDead()) resolve(w.process.exitCode ?? 1)
          else
            w.once('exit', (code: number | null, signal: string | null) =>
              resolve(STOP_SIGNALS.some((s) => s === signal) ? 0 : (code ?? 1)),
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
    cluster.off('listening', onListening)
    cluster.off('exit', onExit)
    metrics.detach()
    logger.info({ codes }, 'stopped')
    const code = !failed && codes.every((c) => c === 0) ? 0 : 1
    finish(code)
    return code
  }

  const readyPromise = new Promise<string>((resolve) => {
    announce = resolve
  })
  cluster.on('listening', onListening)
  cluster.on('exit', onExit)
  metrics.attach()
  const start = async () => {
    // Should another process take the port before the first worker listens, that worker fails to
    // start and the cluster stops: never workers serving a port other than the one announced.
    if (port === 0) port = await freePort(config.host)
    if (stopping) return
    for (let i = 0; i < config.workers; i++) initial.add(fork())
  }
  start().catch((err: unknown) => {
    // Most often the host itself cannot be listened on (an address of another machine, a name that
    // does not resolve): said on stderr, as a single process says it, not only in the log.
    const reason = listenFailure(config, err).message
    logger.fatal({ err }, `cannot listen on ${config.host}; stopping`)
    reportOnStderr(reason)
    failed = true
    void stop('cannot listen')
  })
  return { ready: readyPromise, stop, done }
}

/** The errors with which the operating system refuses a --host, or a --port, to listen on. */
const REFUSED_HOST = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EADDRNOTAVAIL'])
const REFUSED_PORT = new Set(['EADDRINUSE', 'EACCES'])

/**
 * A failure to listen, named by the setting whose value the operating system refused: `--host
 * 192.0.2.1: listen EADDRNOTAVAIL …` says what to change, where the bare reason does not.
 */
export function listenFailure(config: ServeConfig, error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error))
  const code = (error as NodeJS.ErrnoException).code ?? ''
  const setting = REFUSED_HOST.has(code)
    ? `--host ${config.host}`
    : REFUSED_PORT.has(code)
      ? `--port ${config.port}`
      : undefined
  return setting === undefined ? error : new Error(`${setting}: ${error.message}`, { cause: error })
}

/**
 * Runs the primary until SIGTERM/SIGINT/SIGHUP (or a worker that cannot start), then exits.
 * `onStopSignal` sets what those signals do, on listeners that serve put in place at its start.
 */
export async function runPrimary(
  config: ServeConfig,
  logger: Logger,
  onStopSignal: (onSignal: (signal: NodeJS.Signals) => void) => void,
): Promise<void> {
  const running = startCluster(config, logger)
  onStopSignal((signal) => void running.stop(signal))
  process.exit(await running.done)
}
