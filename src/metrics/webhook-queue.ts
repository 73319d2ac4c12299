import { Gauge } from 'prom-client'
import type { WebhookStore } from '../store/types.js'
import type { Metrics } from './registry.js'

/**
 * Webhook queue depth and delivery outcomes, read from the database when /metrics is scraped. The
 * dispatcher runs on its own thread (and in every instance), so the database is the one place that
 * sees all of it; across cluster workers these gauges take one worker's value, not the sum.
 */
export function registerWebhookQueueMetrics(metrics: Metrics, webhooks: WebhookStore): void {
  let pending: ReturnType<WebhookStore['queueStats']> | undefined
  // Both gauges are collected in one scrape; one query serves them.
  const stats = () => {
    pending ??= webhooks.queueStats().finally(() => {
      pending = undefined
    })
    return pending
  }
  new Gauge({
    name: 'plantstore_webhook_events_awaiting_fan_out',
    help: 'Committed plant events not yet turned into webhook deliveries',
    registers: [metrics.registry],
    aggregator: 'first',
    async collect() {
      this.set((await stats()).awaitingFanOut)
    },
  })
  new Gauge({
    name: 'plantstore_webhook_deliveries',
    help: 'Stored webhook deliveries by status: pending is the queue depth; succeeded and failed are kept outcomes',
    labelNames: ['status'],
    registers: [metrics.registry],
    aggregator: 'first',
    async collect() {
      const { deliveries } = await stats()
      for (const [status, count] of Object.entries(deliveries)) this.set({ status }, count)
    },
  })
}

/**
 * 1 while this process holds the webhook dispatcher lease, so that it is the one process sending
 * webhooks. Summed over cluster workers, and over instances in Prometheus, it should read 1: 0 means
 * nobody dispatches.
 */
export function registerDispatcherLeaseMetric(metrics: Metrics, dispatching: () => boolean): void {
  new Gauge({
    name: 'plantstore_webhook_dispatcher_lease_held',
    help: '1 while this process holds the webhook dispatcher lease and so sends the webhooks, else 0',
    registers: [metrics.registry],
    aggregator: 'sum',
    collect() {
      this.set(dispatching() ? 1 : 0)
    },
  })
}
