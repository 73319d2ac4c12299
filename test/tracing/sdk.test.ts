import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as api from '@opentelemetry/api'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Store } from '../../src/store/types.js'
import {
  activeSpan,
  currentTraceparent,
  endSpan,
  errorType,
  inSpan,
  startSpan,
  tracingInUse,
} from '../../src/tracing/active.js'
import { traceCommand } from '../../src/tracing/command.js'
import { startGroupCommit } from '../../src/tracing/group-commit.js'
import { type ExportFailure, exportFailure, startTracing, type TracingHandle } from '../../src/tracing/sdk.js'
import { traceStore } from '../../src/tracing/store-spans.js'
import { endWebhookAttempt, startWebhookAttempt } from '../../src/tracing/webhook-attempt.js'
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js'

// The SDK in this process, exporting to a collector of the test's own: what the server and the
// dispatcher's thread run when tracing is on, here where each path can be driven directly.
const saved = { ...process.env }
let handle: TracingHandle | undefined
let receiver: OtlpReceiver | undefined

async function tracingTo(endpoint: string, errors: ExportFailure[] = []): Promise<TracingHandle> {
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

  it('exports over OTLP/protobuf, the default protocol, too', async () => {
    receiver = await startOtlpReceiver()
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    handle = await startTracing({ protocol: 'http/protobuf' }, () => {})
    endSpan(startSpan('protobuf-span'))
    await handle.shutdown(5_000)
    handle = undefined
    expect(receiver.raw()).toContain('protobuf-span')
  })

  it("tells the SDK's errors once a minute at most, with what failed and never an error's message", async () => {
    receiver = await startOtlpReceiver()
    const errors: ExportFailure[] = []
    await tracingTo(receiver.url, errors)
    api.diag.error(
      'export failed:',
      Object.assign(new Error('connect ECONNREFUSED 10.0.0.1'), { code: 'ECONNREFUSED' }),
      new TypeError('a remote body'),
      'again',
    )
    api.diag.error('export failed:', new Error('a second time'))
    api.diag.warn('not told')
    expect(errors).toEqual([{ reason: 'export failed: ECONNREFUSED TypeError again' }])
  })

  it("tells a collector's refusal by its status, never its body, which may echo the credentials it was sent", async () => {
    // A collector that refuses every export and quotes the request's headers back.
    const echo = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        response.writeHead(401, 'Unauthorized by secret-reason', { 'content-type': 'text/plain' })
        response.end(`refused: ${JSON.stringify(request.headers)}`)
      })
    })
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    try {
      process.env.OTEL_EXPORTER_OTLP_HEADERS = 'Authorization=Basic c2VjcmV0LWNyZWRlbnRpYWw='
      process.env.OTEL_BSP_SCHEDULE_DELAY = '20'
      const errors: ExportFailure[] = []
      await tracingTo(`http://127.0.0.1:${(echo.address() as AddressInfo).port}`, errors)
      endSpan(startSpan('refused'))
      await vi.waitFor(() => expect(errors).toHaveLength(1), { timeout: 5_000 })
      expect(errors).toEqual([{ status: 401, reason: 'HTTP 401' }])
      expect(JSON.stringify(errors)).not.toMatch(/c2VjcmV0|secret|refused|at /)
    } finally {
      echo.closeAllConnections()
      echo.close()
    }
  })

  it("says of a failed export only its status, a code, the SDK's own words or an error's name", () => {
    expect(exportFailure(Object.assign(new Error('Bad Gateway'), { code: 502, data: 'body' }))).toEqual({
      status: 502,
      reason: 'HTTP 502',
    })
    expect(
      exportFailure(Object.assign(new Error('connect ECONNREFUSED 10.1.1.1:4318'), { code: 'ECONNREFUSED' })),
    ).toEqual({
      reason: 'ECONNREFUSED',
    })
    expect(exportFailure(new Error('Request timed out'))).toEqual({ reason: 'Request timed out' })
    expect(exportFailure(new RangeError('Authorization: Basic c2VjcmV0'))).toEqual({ reason: 'RangeError' })
    expect(exportFailure({ name: 'a name with spaces: secret', code: 'lower-case secret' })).toEqual({
      reason: 'export failed',
    })
    expect(exportFailure('a string')).toEqual({ reason: 'export failed' })
  })

  it("wraps a store's calls in spans under a traced request only, whatever they return or throw", async () => {
    receiver = await startOtlpReceiver()
    const tracing = await tracingTo(receiver.url)
    const plants = {
      get: async (id: number) => id,
      list: async () => 'listed',
      create: () => {
        throw Object.assign(new Error('exists'), { code: 'EXISTS' })
      },
      update: async () => {
        throw new RangeError('bad')
      },
    }
    const store = traceStore(
      { kind: 'sqlite', plants, tokens: {}, idempotency: {}, webhooks: {} } as unknown as Store,
      'sqlite',
    )
    const traced = store.plants as unknown as typeof plants
    expect(await traced.get(1)).toBe(1) // no request span: no store span
    const request = startSpan('request')
    await inSpan(request, async () => {
      expect(await traced.get(2)).toBe(2)
      expect(await traced.list()).toBe('listed')
      expect(() => traced.create()).toThrow('exists')
      await expect(traced.update()).rejects.toThrow('bad')
      expect(currentTraceparent()).toMatch(/^00-/)
    })
    endSpan(request)
    expect(store.kind).toBe('sqlite')
    // A group commit links every sampled waiter; none sampled, none made.
    expect(startGroupCommit('sqlite', [{ span: undefined }])).toBeUndefined()
    const waiting = startSpan('waiting')
    const commit = startGroupCommit('sqlite', [{ span: waiting }, { span: undefined }])
    commit?.end()
    endSpan(waiting)
    await tracing.shutdown(5_000)
    handle = undefined

    const spans = receiver.spans()
    const names = spans.map((s) => s.name)
    expect(names.filter((n) => n.startsWith('plants.'))).toEqual([
      'plants.get',
      'plants.list',
      'plants.create',
      'plants.update',
    ])
    expect(spans.find((s) => s.name === 'plants.create')?.attributes['error.type']).toBe('EXISTS')
    expect(spans.find((s) => s.name === 'plants.update')?.attributes['error.type']).toBe('RangeError')
    const made = spans.find((s) => s.name === 'sqlite group commit')
    expect(made?.attributes['db.operation.batch.size']).toBe(2)
    expect(spans.find((s) => s.name === 'waiting')?.links).toEqual([
      { traceId: made?.traceId, spanId: made?.spanId },
    ])
  })

  it('traces a command as one span, failed or not, and runs it untraced without an endpoint', async () => {
    expect(await traceCommand('export', async () => 'untraced')).toBe('untraced')
    receiver = await startOtlpReceiver()
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json'
    // One command a process, as the CLI runs them: the SDK registers itself once.
    await expect(
      traceCommand('import', async () => {
        throw new Error('failed import')
      }),
    ).rejects.toThrow('failed import')
    const spans = receiver.spans()
    expect(spans.map((s) => s.name)).toEqual(['plantstore import'])
    expect(spans.find((s) => s.name === 'plantstore import')?.status.code).toBe(2)
  })

  it('makes each webhook attempt a trace of its own, linked to its cause, with a traceparent to send', async () => {
    const delivery = (url: string, traceparent?: string) =>
      ({
        id: 'd1',
        webhookId: 'wh_1',
        attempt: 1,
        eventId: 'e1',
        eventType: 'plant.created',
        url,
        traceparent,
      }) as unknown as Parameters<typeof startWebhookAttempt>[0]
    expect(startWebhookAttempt(delivery('https://example.com/hook'), {})).toBeUndefined()
    endWebhookAttempt(undefined, { statusCode: 200, error: null }, true)
    receiver = await startOtlpReceiver()
    const tracing = await tracingTo(receiver.url)
    const cause = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const headers: Record<string, string> = {}
    const linked = startWebhookAttempt(delivery('https://example.com/hook?key=url-secret', cause), headers)
    endWebhookAttempt(linked, { statusCode: 500, error: null }, false)
    endWebhookAttempt(
      startWebhookAttempt(delivery('http://127.0.0.1:9/h'), {}),
      { statusCode: null, error: 'x' },
      false,
    )
    endWebhookAttempt(
      startWebhookAttempt(delivery('not a url', 'garbage'), {}),
      { statusCode: 204, error: null },
      true,
    )
    await tracing.shutdown(5_000)
    handle = undefined

    const [first, second, third] = receiver.spans().filter((s) => s.name === 'webhook attempt')
    expect(headers.traceparent).toBe(`00-${first?.traceId}-${first?.spanId}-01`)
    expect(first?.links).toEqual([
      { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' },
    ])
    expect(first?.attributes).toMatchObject({
      'server.address': 'example.com',
      'server.port': 443,
      'error.type': '500',
    })
    expect(second?.attributes).toMatchObject({ 'server.port': 9, 'error.type': 'no answer' })
    expect(third?.links).toEqual([])
    expect(third?.attributes['server.address']).toBeUndefined()
    expect(third?.attributes['http.response.status_code']).toBe(204)
    expect(receiver.raw()).not.toContain('url-secret')
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
