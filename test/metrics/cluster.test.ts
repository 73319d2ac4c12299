import cluster, { type Worker } from 'node:cluster'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/log.js'
import { ClusterMetricsPrimary } from '../../src/metrics/cluster.js'

// The primary's aggregation in this process, with stand-in workers that answer through the cluster
// module's own events as real ones do (test/process/workers.test.ts checks the same with real processes).

interface FakeWorker {
  worker: Worker
  registry: Registry
  requests: Counter
  latency: Histogram
  memory: Gauge
}

function fakeWorker(id: number, options: { silent?: boolean } = {}): FakeWorker {
  const registry = new Registry()
  const requests = new Counter({
    name: 'requests_total',
    help: 'h',
    labelNames: ['route'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'latency_seconds',
    help: 'h',
    buckets: [0.1, 1],
    registers: [registry],
  })
  const memory = new Gauge({ name: 'memory_bytes', help: 'h', registers: [registry] })
  const worker = {
    id,
    process: { pid: 1000 + id },
    isConnected: () => true,
    send: (message: { plantstore: string; id: number }, done: (error: Error | null) => void) => {
      done(null)
      if (options.silent || message.plantstore !== 'metrics:collect') return
      void registry.getMetricsAsJSON().then((metrics) => {
        // Copied, as the IPC channel's serialization copies it: prom-client hands out its live values.
        cluster.emit('message', worker, {
          plantstore: 'metrics:collected',
          id: message.id,
          metrics: structuredClone(metrics),
        })
      })
    },
  } as unknown as Worker
  return { worker, registry, requests, latency, memory }
}

const line = (text: string, series: string) =>
  text
    .split('\n')
    .find((l) => l.startsWith(`${series} `))
    ?.slice(series.length + 1)

describe('the cluster primary’s metrics', () => {
  let primary: ClusterMetricsPrimary | undefined
  afterEach(() => primary?.detach())

  it('sums every worker, and keeps what a worker that exited had sent, gauges aside', async () => {
    const one = fakeWorker(1)
    const two = fakeWorker(2)
    let workers = [one, two]
    primary = new ClusterMetricsPrimary(() => workers.map((w) => w.worker), createLogger('silent'), 2000)
    primary.attach()
    one.requests.inc({ route: '/a' }, 3)
    two.requests.inc({ route: '/a' }, 4)
    two.requests.inc({ route: '/b' }, 1)
    one.latency.observe(0.05)
    two.latency.observe(0.5)
    one.memory.set(10)
    two.memory.set(20)
    const first = await primary.collect()
    expect(line(first, 'requests_total{route="/a"}')).toBe('7')
    expect(line(first, 'requests_total{route="/b"}')).toBe('1')
    expect(line(first, 'latency_seconds_count')).toBe('2')
    expect(line(first, 'memory_bytes')).toBe('30')

    // Worker two dies; its replacement starts from zero.
    two.requests.inc({ route: '/a' }, 100) // counted after its last scrape: lost with it
    workers = [one, fakeWorker(3)]
    cluster.emit('exit', two.worker, 1, null)
    const replacement = workers[1] as FakeWorker
    replacement.requests.inc({ route: '/a' }, 2)
    replacement.latency.observe(0.05)
    replacement.memory.set(5)
    const second = await primary.collect()
    expect(line(second, 'requests_total{route="/a"}')).toBe('9')
    expect(line(second, 'requests_total{route="/b"}')).toBe('1')
    expect(line(second, 'latency_seconds_count')).toBe('3')
    expect(line(second, 'latency_seconds_bucket{le="0.1"}')).toBe('2')
    expect(line(second, 'memory_bytes')).toBe('15')
  })

  it('counts a worker that exits during a scrape once, from what it had sent before', async () => {
    const one = fakeWorker(1)
    const two = fakeWorker(2, { silent: true })
    primary = new ClusterMetricsPrimary(() => [one.worker, two.worker], createLogger('silent'), 2000)
    primary.attach()
    one.requests.inc({ route: '/a' }, 1)
    const scrape = primary.collect()
    // Silent worker two never answers this scrape, then exits: the scrape ends without it.
    await new Promise((resolve) => setTimeout(resolve, 50))
    cluster.emit('exit', two.worker, 1, null)
    expect(line(await scrape, 'requests_total{route="/a"}')).toBe('1')
  })

  it('fails a scrape a worker does not answer in time, naming it', async () => {
    const one = fakeWorker(1)
    const two = fakeWorker(2, { silent: true })
    primary = new ClusterMetricsPrimary(() => [one.worker, two.worker], createLogger('silent'), 100)
    primary.attach()
    await expect(primary.collect()).rejects.toThrow('no answer from worker 1002')
  })
})
