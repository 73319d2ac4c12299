import cluster, { type Worker } from 'node:cluster'
import type { Logger } from 'pino'
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client'
import { AppError, errors } from '../errors.js'

// GET /metrics under `serve --workers N`. Whichever worker takes the request asks the primary, the
// primary asks every worker for its registry (as JSON) and sums them with prom-client's
// AggregatorRegistry.aggregate (each metric by its own `aggregator`), and the text goes back to the
// asking worker. prom-client's own clusterMetrics() does the same round trip, but it asks workers
// still starting (which cannot answer yet), waits a fixed 5 s, and keeps every request that timed
// out in memory for good; this keeps to workers that listen and forgets what it gave up on.

/** How long the primary waits for every worker's series. Prometheus's default scrape timeout is 10 s. */
export const COLLECT_TIMEOUT_MS = 5000
/** How long a worker waits for the primary's answer: past the primary's own limit, so that one wins. */
const SCRAPE_TIMEOUT_MS = COLLECT_TIMEOUT_MS + 2000

type Message =
  /** worker → primary: a scrape arrived; answer with every worker's series. */
  | { plantstore: 'metrics:scrape'; id: number }
  /** primary → each worker: send your series. */
  | { plantstore: 'metrics:collect'; id: number }
  /** worker → primary: its series, or why it has none. */
  | { plantstore: 'metrics:collected'; id: number; metrics?: WorkerSeries; error?: string }
  /** primary → the asking worker: the aggregate, or why there is none. */
  | { plantstore: 'metrics:scraped'; id: number; text?: string; error?: string }

type WorkerSeries = MetricObjectWithValues<MetricValue<string>>[]

function isMessage<K extends Message['plantstore']>(
  message: unknown,
  kind: K,
): message is Extract<Message, { plantstore: K }> {
  return typeof message === 'object' && message !== null && (message as Message).plantstore === kind
}

function unavailable(reason: string): AppError {
  return new AppError(
    errors.UNAVAILABLE,
    `The metrics of every worker could not be gathered (${reason}): retry after the time given.`,
    { 'retry-after': '1' },
  )
}

interface Collection {
  /** Workers yet to answer, by cluster id, with their pids for the log. */
  waiting: Map<number, number | undefined>
  /** The series received so far, by the cluster id of the worker that sent them. */
  answers: Map<number, WorkerSeries>
  finish(error?: Error): void
}

/**
 * The counters and histograms of a worker's series: what only ever grows while the worker lives.
 * Gauges (memory, the dispatcher lease) describe a process that is running, and go with it.
 */
function growingOnly(series: WorkerSeries): WorkerSeries {
  return series.filter((metric) => {
    const type = String(metric.type)
    return metric.aggregator === 'sum' && (type === 'counter' || type === 'histogram')
  })
}

/**
 * `a` and `b` summed as a scrape sums workers (AggregatorRegistry.aggregate, each metric by its own
 * aggregator), kept as series: the aggregate registry's metrics carry their values, read without the
 * round trip through text.
 */
function sumSeries(a: WorkerSeries, b: WorkerSeries): WorkerSeries {
  return AggregatorRegistry.aggregate([a, b]).getMetricsAsArray() as unknown as WorkerSeries
}

/**
 * The primary's side: answers workers' scrapes with the aggregate of every listening worker. A
 * worker that does not answer within `timeoutMs` fails the scrape (503 to the client) rather than
 * leaving its counts out: a sum that drops would look to Prometheus like a counter reset and show
 * as a burst in rate(). A worker that exits meanwhile is left out of the scrape; what it had sent
 * before stays in the sums (see `retired`).
 */
export class ClusterMetricsPrimary {
  private nextId = 0
  private readonly collections = new Map<number, Collection>()
  /** Each listening worker's counters and histograms as it last sent them. */
  private readonly lastSent = new Map<number, WorkerSeries>()
  /**
   * The counters and histograms of the workers that exited, as they last sent them, added to every
   * later aggregate: without them the sums would drop when a worker is replaced, which Prometheus
   * reads as a counter reset and rate() shows as a burst as large as every other worker's total. What
   * a worker counted after its last scrape is lost with it; a sum never goes down.
   */
  private retired: WorkerSeries = []
  private readonly onMessage = (worker: Worker, message: unknown) => this.received(worker, message)
  private readonly onExit = (worker: Worker) => {
    const last = this.lastSent.get(worker.id)
    this.lastSent.delete(worker.id)
    if (last) this.retired = sumSeries(this.retired, last)
    for (const collection of this.collections.values()) {
      // What it sent is in `retired` now: counted there, not twice.
      collection.answers.delete(worker.id)
      this.answered(collection, worker.id)
    }
  }

  constructor(
    /** The workers to ask: those that listen (one still starting has served nothing). */
    private readonly workers: () => Worker[],
    private readonly logger: Logger,
    private readonly timeoutMs = COLLECT_TIMEOUT_MS,
  ) {}

  attach(): void {
    cluster.on('message', this.onMessage)
    cluster.on('exit', this.onExit)
  }

  detach(): void {
    cluster.off('message', this.onMessage)
    cluster.off('exit', this.onExit)
    for (const collection of this.collections.values())
      collection.finish(new Error('the cluster is stopping'))
  }

  /** The aggregate of every listening worker's series, in the Prometheus text format. */
  collect(): Promise<string> {
    const workers = this.workers().filter((w) => w.isConnected())
    const id = this.nextId++
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        const silent = [...collection.waiting.values()]
        this.logger.warn({ pids: silent, timeoutMs: this.timeoutMs }, 'workers did not send their metrics')
        collection.finish(new Error(`no answer from worker ${silent.join(', ')}`))
      }, this.timeoutMs)
      const collection: Collection = {
        waiting: new Map(workers.map((w) => [w.id, w.process.pid])),
        answers: new Map(),
        finish: (error) => {
          // Once only: a send that fails late may report a worker after the collection ended.
          if (!this.collections.delete(id)) return
          clearTimeout(timer)
          if (error) reject(error)
          else
            AggregatorRegistry.aggregate([...collection.answers.values(), this.retired])
              .metrics()
              .then(resolve, reject)
        },
      }
      this.collections.set(id, collection)
      // Only in the moment before the first worker's start is known here: an empty response would
      // look to Prometheus like every series had gone.
      if (workers.length === 0) collection.finish(new Error('no worker listens yet'))
      for (const worker of workers) {
        worker.send({ plantstore: 'metrics:collect', id } satisfies Message, (error) => {
          if (error) this.answered(collection, worker.id)
        })
      }
    })
  }

  private received(worker: Worker, message: unknown): void {
    if (isMessage(message, 'metrics:scrape')) {
      const reply = (answer: { text?: string; error?: string }) =>
        // A worker gone meanwhile needs no answer.
        worker.send({ plantstore: 'metrics:scraped', id: message.id, ...answer } satisfies Message, () => {})
      this.collect().then(
        (text) => reply({ text }),
        (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
      )
      return
    }
    if (!isMessage(message, 'metrics:collected')) return
    const collection = this.collections.get(message.id)
    // An answer after its collection gave up is dropped with it.
    if (!collection?.waiting.has(worker.id)) return
    if (message.error !== undefined || !message.metrics) {
      collection.finish(new Error(`worker ${worker.process.pid} could not collect: ${message.error}`))
      return
    }
    collection.answers.set(worker.id, message.metrics)
    this.lastSent.set(worker.id, growingOnly(message.metrics))
    this.answered(collection, worker.id)
  }

  private answered(collection: Collection, workerId: number): void {
    if (collection.waiting.delete(workerId) && collection.waiting.size === 0) collection.finish()
  }
}

/**
 * A worker's side: answers the primary's requests for this process's series, and returns what GET
 * /metrics serves here, the primary's aggregate of every worker. It rejects with a 503 when the
 * primary cannot gather them all (or does not answer at all).
 */
export function joinClusterMetrics(registry: Registry): () => Promise<string> {
  const send = (message: Message, onError: (error: Error) => void = () => {}) => {
    if (!process.send) return onError(new Error('no channel to the cluster primary'))
    process.send(message, (error: Error | null) => {
      if (error) onError(error)
    })
  }
  const scrapes = new Map<number, (answer: { text: string } | { error: Error }) => void>()
  let nextId = 0
  process.on('message', (message: unknown) => {
    if (isMessage(message, 'metrics:collect')) {
      registry.getMetricsAsJSON().then(
        (metrics) => send({ plantstore: 'metrics:collected', id: message.id, metrics }),
        (error: unknown) => send({ plantstore: 'metrics:collected', id: message.id, error: String(error) }),
      )
    } else if (isMessage(message, 'metrics:scraped')) {
      scrapes.get(message.id)?.(
        message.text !== undefined
          ? { text: message.text }
          : { error: unavailable(message.error ?? 'no reason given') },
      )
    }
  })
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++
      const timer = setTimeout(
        () => finish({ error: unavailable('the cluster primary did not answer') }),
        SCRAPE_TIMEOUT_MS,
      )
      function finish(answer: { text: string } | { error: Error }) {
        clearTimeout(timer)
        scrapes.delete(id)
        if ('text' in answer) resolve(answer.text)
        else reject(answer.error)
      }
      scrapes.set(id, finish)
      send({ plantstore: 'metrics:scrape', id }, (error) => finish({ error: unavailable(error.message) }))
    })
}
