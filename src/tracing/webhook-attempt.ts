import type { Span } from '@opentelemetry/api'
import type { ClaimedDelivery } from '../store/types.js'
import { tracingInUse } from './active.js'

/** What the sender tells of an attempt, as far as a span records it. */
interface AttemptOutcome {
  statusCode: number | null
  error: string | null
}

/**
 * The span of one webhook attempt, or undefined when tracing is off. Each attempt is a trace of its
 * own (it runs long after the request that caused it, maybe many times), linked to the span of the
 * request that wrote its event when the event carries one. Its context goes out in the attempt's
 * `traceparent` header, which is added to `headers`. Of the URL only the host and port are
 * recorded: a receiver's URL may hold a secret of its own in its path or query.
 */
export function startWebhookAttempt(
  delivery: ClaimedDelivery,
  headers: Record<string, string>,
): Span | undefined {
  const tracing = tracingInUse()
  if (!tracing) return undefined
  const { api, tracer } = tracing
  const cause = delivery.traceparent
    ? api.trace.getSpanContext(
        api.propagation.extract(api.ROOT_CONTEXT, { traceparent: delivery.traceparent }),
      )
    : undefined
  const attributes: Record<string, string | number> = {
    'http.request.method': 'POST',
    'webhook.id': delivery.webhookId,
    'webhook.delivery.id': delivery.id,
    'webhook.attempt': delivery.attempt,
    'webhook.event.id': delivery.eventId,
    'webhook.event.type': delivery.eventType,
  }
  try {
    const url = new URL(delivery.url)
    attributes['server.address'] = url.hostname
    attributes['server.port'] = Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
  } catch {
    // The sender refuses it; the span says how the attempt ended.
  }
  const span = tracer.startSpan(
    'webhook attempt',
    {
      root: true,
      kind: api.SpanKind.CLIENT,
      attributes,
      links: cause && api.isSpanContextValid(cause) ? [{ context: cause }] : [],
    },
    api.ROOT_CONTEXT,
  )
  api.propagation.inject(api.trace.setSpan(api.ROOT_CONTEXT, span), headers)
  return span
}

export function endWebhookAttempt(span: Span | undefined, outcome: AttemptOutcome, ok: boolean): void {
  const tracing = tracingInUse()
  if (!span || !tracing) return
  if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode)
  if (!ok) {
    span.setStatus({ code: tracing.api.SpanStatusCode.ERROR })
    span.setAttribute('error.type', outcome.statusCode === null ? 'no answer' : String(outcome.statusCode))
  }
  span.end()
}
