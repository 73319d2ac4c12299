import * as api from '@opentelemetry/api'
import { afterEach, describe, expect, it } from 'vitest'
import {
  activeSpan,
  currentTraceparent,
  endSpan,
  errorType,
  inSpan,
  startSpan,
  tracingInUse,
} from '../../src/tracing/active.js'
import { startTracing, type TracingHandle } from '../../src/tracing/sdk.js'
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js'

// The SDK in this process, exporting to a collector of the test's own: what the server and the
// dispatcher's thread run when tracing is on, here where each path can be driven directly.
const saved = { ...process.env }
let handle: TracingHandle | undefined
let receiver: OtlpReceiver | undefined

async function tracingTo(endpoint: string, errors: string[] = []): Promise<TracingHandle> {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
  process.env.OTEL_SERVICE_NAME = 'plantstore-sdk-test'
  handle = await startTracing({ protocol: 'http/json' }, (message) => errors.push(message))
  return handle
}

afterEach(async () => {
  await handle?.shutdown(2_000)
  handle = undefined
  await receiver?.close()
  receiver = undefined
  // The SDK registers itself globally: the next test starts from nothing, as a new process does.
  api.trace.disable()
  api.propagation.disable()
  api.context.disable()
  api.diag.disable()
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
  Object.assign(process.env, saved)
})

describe('the tracing SDK', () => {
  it('exports spans with their parent and the service name, on shutdown, and is off again after', async () => {
    receiver = await startOtlpReceiver()
    const tracing = await tracingTo(receiver.url)
    expect(tracingInUse()).toBeDefined()
    const parent = startSpan('parent', { 'plantstore.test': 1 })
    let traceparent: string | undefined
    inSpan(parent, () => {
      const child = startSpan('child')
      inSpan(child, () => {
        expect(activeSpan()).toBe(child)
        traceparent = currentTraceparent()
      })
      endSpan(child)
    })
    endSpan(parent)
    await tracing.shutdown(5_000)
    handle = undefined
    expect(tracingInUse()).toBeUndefined()
    expect(startSpan('after')).toBeUndefined()
    expect(currentTraceparent()).toBeUndefined()

    const spans = receiver.spans()
    const p = spans.find((s) => s.name === 'parent')
    const c = spans.find((s) => s.name === 'child')
    expect(p?.attributes['plantstore.test']).toBe(1)
    expect(p?.resource['service.name']).toBe('plantstore-sdk-test')
    expect(c?.parentSpanId).toBe(p?.spanId)
    expect(traceparent).toBe(`00-${c?.traceId}-${c?.spanId}-01`)
  })

  it("keeps a failed span's kind of error and never its message, nor a status message", async () => {
    receiver = await startOtlpReceiver()
    const tracing = await tracingTo(receiver.url)
    const failed = startSpan('failed')
    endSpan(failed, Object.assign(new Error('body {"name":"secret-in-message"}'), { code: 'SQLITE_BUSY' }))
    const plain = startSpan('plain failure')
    endSpan(plain, new TypeError('secret-in-message'))
    const statused = startSpan('status message')
    statused?.setStatus({ code: api.SpanStatusCode.ERROR, message: 'secret-in-message' })
    statused?.end()
    await tracing.shutdown(5_000)
    handle = undefined

    const spans = receiver.spans()
    expect(spans.find((s) => s.name === 'failed')?.attributes['error.type']).toBe('SQLITE_BUSY')
    expect(spans.find((s) => s.name === 'plain failure')?.attributes['error.type']).toBe('TypeError')
    expect(spans.find((s) => s.name === 'status message')?.status.code).toBe(2)
    expect(receiver.raw()).not.toContain('secret-in-message')
  })

  it("names an error by its code when it is a plain word, else by the error's kind", () => {
    expect(errorType(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe('ECONNREFUSED')
    expect(errorType(Object.assign(new Error('x'), { code: 'has spaces' }))).toBe('Error')
    expect(errorType(new RangeError('x'))).toBe('RangeError')
    expect(errorType('a string')).toBe('Error')
    expect(inSpan(undefined, () => 7)).toBe(7)
    expect(() => endSpan(undefined, new Error('x'))).not.toThrow()
  })
})
