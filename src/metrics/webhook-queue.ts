import { Gauge } from 'prom-client'
import type { WebhookQueueStats, WebhookStore } from '../store/types.js'
import type { Metrics } from './registry.js'

/**
 * Webhook queue depth and delivery outcomes, read from the database when /metrics is scraped. The
 * dispatcher runs on its own thread (and in every instance), so the database is the one place that
 * sees all of it; across cluster workers these gauges take one worker's value, not the sum.
 *
 * While the database cannot respond, both are left out of the scrape (no sample rather than a stale
 * or made-up one) and the rest of it is served: a failed read would fail the whole scrape, hiding
 * the request counts and process figures that show the outage itself.
 */
export function registerWebhookQueueMetrics(metrics: Metrics, webhooks: WebhookStore): void {
  let pending: Promise<WebhookQueueStats | undefined> | undefined
  // Both gauges are collected in one scrape; one query serves them.
  const stats = () => {
    pending ??= webhooks
      .queueStats()
      .catch(() => undefined)
      .finally(() => {
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
      const read = await stats()
      if (read) this.set(read.awaitingFanOut)
      else this.remove()
    },
  })
  new Gauge({
    name: 'plantstore_webhook_deliveries',
    help: 'Stored webhook deliveries by status: pending is the queue depth; succeeded and failed are kept outcomes',
    labelNames: ['status'],
    registers: [metrics.registry],
    aggregator: 'first',
    async collect() {
      const read = await stats()
      if (!read) {
        this.reset()
        return
      }
      for (const [status, count] of Object.entries(read.deliveries)) this.set({ status }, count)
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
