import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/config.js'
import { readTracingSettings } from '../../src/tracing/settings.js'

describe('tracing settings from the OTEL_* variables', () => {
  it('is off unless an OTLP endpoint is set', () => {
    expect(readTracingSettings({})).toBeUndefined()
    expect(readTracingSettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined()
  })

  it('is on with either endpoint, exporting protobuf unless http/json is asked for', () => {
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      protocol: 'http/protobuf',
    })
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      }),
    ).toEqual({ protocol: 'http/json' })
    // The traces-specific protocol wins over the general one.
    expect(
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toEqual({ protocol: 'http/json' })
  })

  it('is off when the SDK is disabled or the traces exporter is none, whatever the endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }
    expect(readTracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'true' })).toBeUndefined()
    expect(readTracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined()
    expect(readTracingSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined()
    expect(readTracingSettings({ ...endpoint, OTEL_SDK_DISABLED: 'false' })).toBeDefined()
  })

  it('refuses a protocol it cannot export and an endpoint that is not a URL, naming the variable', () => {
    expect(() =>
      readTracingSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toThrow(
      new ConfigError('invalid OTEL_EXPORTER_OTLP_PROTOCOL "grpc": expected http/protobuf or http/json'),
    )
    expect(() => readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318 x' })).toThrow(
      ConfigError,
    )
  })
})
