import { ConfigError } from '../config.js'

/**
 * Tracing is the one exception to "every setting is a flag and an env": it is configured by the
 * standard OTEL_* variables, so that the same environment that sets up every other service's traces
 * sets up this one's. Read once at start; this module loads nothing of OpenTelemetry.
 */
export interface TracingSettings {
  /** The OTLP/HTTP encoding spans are exported in. */
  protocol: 'http/protobuf' | 'http/json'
}

/** What `serve --help` lists under "OpenTelemetry (env only)". */
export const TRACING_HELP = `
OpenTelemetry (env only; off unless an endpoint is set; see docs/tracing.md):
  OTEL_EXPORTER_OTLP_ENDPOINT         OTLP/HTTP collector base URL, e.g. http://127.0.0.1:4318
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full URL for traces (instead of ENDPOINT + /v1/traces)
  OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf (default) or http/json
  OTEL_SERVICE_NAME                   the service name on every span (default: plantstore)
  OTEL_TRACES_SAMPLER                 e.g. parentbased_traceidratio (default: parentbased_always_on)
  OTEL_TRACES_SAMPLER_ARG             the ratio for a traceidratio sampler, e.g. 0.1
  OTEL_SDK_DISABLED                   true turns tracing off whatever else is set
`

const PROTOCOLS = new Set(['http/protobuf', 'http/json'])

/**
 * The tracing settings when traces are to be exported, else undefined: an endpoint must be set and
 * the SDK not disabled. A protocol this build cannot export (grpc) is a configuration error, as a
 * bad flag is, rather than traces silently going nowhere.
 */
export function readTracingSettings(env: NodeJS.ProcessEnv = process.env): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (!endpoint) return undefined
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = env[name]?.trim() || 'http/protobuf'
  if (!PROTOCOLS.has(protocol)) {
    throw new ConfigError(`invalid ${name} ${JSON.stringify(protocol)}: expected http/protobuf or http/json`)
  }
  if (!URL.canParse(endpoint) || !['http:', 'https:'].includes(new URL(endpoint).protocol)) {
    throw new ConfigError(
      `invalid OTLP endpoint ${JSON.stringify(endpoint)}: expected an http:// or https:// URL`,
    )
  }
  return { protocol: protocol as TracingSettings['protocol'] }
}
