import { type Aggregator, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

// Every series the service exports, in one registry per process. The registry is an object, not
// prom-client's global, so tests build as many apps as they like. Under --workers N the cluster
// primary merges the workers' registries (metrics/cluster.ts): counters and histograms sum; a gauge
// that must not (one read from the database) says so with its `aggregator`.

/** Route label for requests that matched no route, so random URLs cannot mint new series. */
export const UNMATCHED_ROUTE = 'unmatched'

export interface Metrics {
  readonly registry: Registry
  readonly httpRequests: Counter<'method' | 'route' | 'status'>
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>
  readonly tokenVerifications: Counter<'cache'>
  readonly dbDuration: Histogram<'operation' | 'outcome'>
  readonly rateLimited: Counter<'key'>
  readonly retentionDeleted: Counter<'kind'>
  readonly webhooksDisabled: Counter
  readonly eventStreams: Gauge
  readonly eventStreamEnds: Counter<'reason'>
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, handles). On for the server, off in most tests. */
  processMetrics?: boolean
}

/**
 * Process series prom-client would sum across cluster workers where a sum means nothing. The file
 * descriptor limit is each worker's own (all inherit the same one): summed, it promised N times the
 * descriptors any worker can open. Open descriptors go with it as the fullest worker's count, so
 * open over max still tells how near a worker is to running out.
 */
const PROCESS_AGGREGATORS: Record<string, Aggregator> = {
  plantstore_process_max_fds: 'min',
  plantstore_process_open_fds: 'max',
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  if (options.processMetrics) {
    collectDefaultMetrics({ register: registry, prefix: 'plantstore_' })
    for (const [name, aggregator] of Object.entries(PROCESS_AGGREGATORS)) {
      // Absent where the platform has no /proc.
      const metric = registry.getSingleMetric(name) as { aggregator: Aggregator } | undefined
      if (metric) metric.aggregator = aggregator
    }
  }
  const registers = [registry]
  return {
    registry,
    httpRequests: new Counter({
      name: 'plantstore_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'plantstore_http_request_duration_seconds',
      help: 'Time from receiving a request to the end of its answer, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    tokenVerifications: new Counter({
      name: 'plantstore_token_verifications_total',
      help: 'Bearer tokens verified: cache hit (no database read) or miss (read from the store)',
      labelNames: ['cache'],
      registers,
    }),
    dbDuration: new Histogram({
      name: 'plantstore_db_operation_duration_seconds',
      help: 'Time spent in store operations, by operation (e.g. plants.create) and outcome (ok or error)',
      labelNames: ['operation', 'outcome'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    }),
    rateLimited: new Counter({
      name: 'plantstore_rate_limited_total',
      help: 'Requests refused with 429, by what they were counted against (token or address)',
      labelNames: ['key'],
      registers,
    }),
    retentionDeleted: new Counter({
      name: 'plantstore_retention_deleted_total',
      help: 'Rows deleted by the retention sweep, by kind',
      labelNames: ['kind'],
      registers,
    }),
    webhooksDisabled: new Counter({
      name: 'plantstore_webhook_subscriptions_disabled_total',
      help: 'Webhook subscriptions this process disabled because their attempts kept failing',
      registers,
    }),
    eventStreams: new Gauge({
      name: 'plantstore_event_streams',
      help: 'Change streams (GET /events/stream) open now',
      registers,
    }),
    eventStreamEnds: new Counter({
      name: 'plantstore_event_stream_ends_total',
      help: 'Change streams ended, by reason: client, backlog, revoked, expired, draining',
      labelNames: ['reason'],
      registers,
    }),
  }
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** Methods outside the usual few share one label, like unknown routes. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : 'OTHER'
}
