import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { bindCounter, bindHistogram } from '../../src/metrics/bound.js'

describe('bound metric series', () => {
  it('expose what they record as the metric’s own series, buckets cumulative', async () => {
    const registry = new Registry()
    const histogram = new Histogram({
      name: 't_seconds',
      help: 'h',
      labelNames: ['route'],
      buckets: [0.1, 1],
      registers: [registry],
    })
    const series = bindHistogram(histogram, { route: '/a' })
    series.observe(0.05)
    series.observe(0.5)
    series.observe(7)
    const text = await registry.metrics()
    expect(text).toContain('t_seconds_bucket{le="0.1",route="/a"} 1')
    expect(text).toContain('t_seconds_bucket{le="1",route="/a"} 2')
    expect(text).toContain('t_seconds_bucket{le="+Inf",route="/a"} 3')
    expect(text).toContain('t_seconds_sum{route="/a"} 7.55')
    expect(text).toContain('t_seconds_count{route="/a"} 3')
  })

  it('keep what the series had before they were bound, and add to it', async () => {
    const registry = new Registry()
    const counter = new Counter({ name: 't_total', help: 'c', labelNames: ['cache'], registers: [registry] })
    const histogram = new Histogram({
      name: 'u_seconds',
      help: 'h',
      labelNames: ['op'],
      buckets: [1],
      registers: [registry],
    })
    counter.inc({ cache: 'hit' }, 5)
    histogram.observe({ op: 'x' }, 0.5)
    bindCounter(counter, { cache: 'hit' }).inc()
    bindCounter(counter, { cache: 'miss' }).inc()
    bindHistogram(histogram, { op: 'x' }).observe(2)
    const text = await registry.metrics()
    expect(text).toContain('t_total{cache="hit"} 6')
    expect(text).toContain('t_total{cache="miss"} 1')
    expect(text).toContain('u_seconds_count{op="x"} 2')
    expect(text).toContain('u_seconds_bucket{le="1",op="x"} 1')
  })
})
