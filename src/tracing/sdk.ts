// Loaded only when tracing is on (see settings.ts): the SDK, its exporters and their dependencies
// would otherwise lengthen every start, also of the processes that do not trace.
import { readFileSync } from 'node:fs'
import * as api from '@opentelemetry/api'
import { setGlobalErrorHandler, W3CTraceContextPropagator } from '@opentelemetry/core'
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

/** A failed export as the log may say it: the collector's status, when it answered, and a short reason. */
export interface ExportFailure {
  status?: number
  reason: string
}

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
  onExportError: (failure: ExportFailure) => void,
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
  const tell = onceAMinute(onExportError)
  // The SDK hands a failed export's error to this handler; its default would write the error whole
  // to diag, body and stack included, and a collector's body may echo the credentials it was sent.
  setGlobalErrorHandler((error) => tell(exportFailure(error)))
  api.diag.setLogger(quietDiag(tell), api.DiagLogLevel.ERROR)
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
 * Told once a minute at most: an export fails every few seconds while the collector is down, and
 * the log should not fill with it.
 */
function onceAMinute(tell: (failure: ExportFailure) => void): (failure: ExportFailure) => void {
  let lastAt = Number.NEGATIVE_INFINITY
  return (failure) => {
    const now = performance.now()
    if (now - lastAt < 60_000) return
    lastAt = now
    tell(failure)
  }
}

/** The SDK's own words for a failure: they quote nothing of the collector's. */
const SDK_REASONS = new Set([
  'Request timed out',
  'Timeout',
  'Export failed with retryable status',
  'Export failed with unknown error',
  'Concurrent export limit reached',
])

/**
 * What the log may say of a failed export: the HTTP status the collector answered (its body, which
 * the exporter's error carries, is dropped), a connection's error code, or the SDK's own words;
 * otherwise only the error's name.
 */
export function exportFailure(error: unknown): ExportFailure {
  if (typeof error !== 'object' || error === null) return { reason: 'export failed' }
  const { code, message, name } = error as { code?: unknown; message?: unknown; name?: unknown }
  if (typeof code === 'number' && Number.isInteger(code) && code >= 100 && code <= 599)
    return { status: code, reason: `HTTP ${code}` }
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return { reason: code }
  if (typeof message === 'string' && SDK_REASONS.has(message)) return { reason: message }
  return { reason: typeof name === 'string' && /^\w{1,40}$/.test(name) ? name : 'export failed' }
}

/**
 * The SDK's other errors told through diag (a setting it ignores, say): its own message, and of any
 * error it adds only what exportFailure keeps.
 */
function quietDiag(tell: (failure: ExportFailure) => void): api.DiagLogger {
  const error = (message: string, ...args: unknown[]) => {
    const detail = args
      .map((a) => (typeof a === 'string' ? a : a instanceof Error ? exportFailure(a).reason : ''))
      .join(' ')
    tell({ reason: `${message} ${detail}`.trim() })
  }
  const none = () => {}
  return { error, warn: none, info: none, debug: none, verbose: none }
}
