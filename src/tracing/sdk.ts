// Loaded only when tracing is on (see settings.ts): the SDK, its exporters and their dependencies
// would otherwise lengthen every start, also of the processes that do not trace.
import { readFileSync } from 'node:fs'
import * as api from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { useTracing } from './active.js'
import type { TracingSettings } from './settings.js'

export interface TracingHandle {
  /** Exports what is still buffered, within `timeoutMs`, and stops tracing in this thread. */
  shutdown(timeoutMs: number): Promise<void>
}

/**
 * A span's status message is the text of whatever failed (the framework puts an error's message
 * there), and a message can quote a request body, a URL or a value. Only the status code is kept.
 */
const statusWithoutMessage: SpanProcessor = {
  onStart() {},
  onEnding(span) {
    if (span.status.message !== undefined) (span as unknown as api.Span).setStatus({ code: span.status.code })
  },
  onEnd() {},
  forceFlush: async () => {},
  shutdown: async () => {},
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  return String((manifest as { version: unknown }).version)
}

/**
 * Starts the OpenTelemetry SDK in this thread (each process of --workers N, and the webhook
 * dispatcher's thread, run one of their own): spans sampled as OTEL_TRACES_SAMPLER says, batched and
 * exported over OTLP/HTTP to the endpoint of the OTEL_* variables, which the exporter reads itself.
 * Only the W3C trace context is taken from incoming requests and passed on: not `baggage`, which a
 * client could fill with anything and which would follow every webhook attempt.
 */
export async function startTracing(
  settings: TracingSettings,
  onExportError: (message: string) => void,
): Promise<TracingHandle> {
  const { OTLPTraceExporter } =
    settings.protocol === 'http/json'
      ? await import('@opentelemetry/exporter-trace-otlp-http')
      : await import('@opentelemetry/exporter-trace-otlp-proto')
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over these defaults.
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        [ATTR_SERVICE_NAME]: 'plantstore',
        [ATTR_SERVICE_VERSION]: packageVersion(),
        'process.pid': process.pid,
      }),
    )
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [statusWithoutMessage, new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  provider.register({ propagator: new W3CTraceContextPropagator() })
  api.diag.setLogger(quietDiag(onExportError), api.DiagLogLevel.ERROR)
  useTracing({ api, tracer: api.trace.getTracer('plantstore', packageVersion()) })
  return {
    async shutdown(timeoutMs) {
      useTracing(undefined)
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      })
      await Promise.race([provider.shutdown().catch(() => {}), late])
      clearTimeout(timer)
    },
  }
}

/**
 * The SDK's errors (a collector that cannot be reached, say), told once a minute at most: an export
 * fails every few seconds while the collector is down, and the log should not fill with it.
 */
function quietDiag(tell: (message: string) => void): api.DiagLogger {
  let lastAt = Number.NEGATIVE_INFINITY
  const error = (message: string, ...args: unknown[]) => {
    const now = performance.now()
    if (now - lastAt < 60_000) return
    lastAt = now
    const detail = args
      .map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : ''))
      .join(' ')
    tell(`${message} ${detail}`.trim())
  }
  const none = () => {}
  return { error, warn: none, info: none, debug: none, verbose: none }
}
