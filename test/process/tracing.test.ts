import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ExportedSpan,
  type OtlpReceiver,
  startOtlpReceiver,
  tracingEnv,
} from '../helpers/otlp-receiver.js'
import { type RunningServer, runCli, startServer } from '../helpers/process.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { sqliteKind, storeKinds, tempDir } from '../helpers/stores.js'

// Real servers exporting to a real (tiny) collector: what spans exist, how they hang together, and
// what never reaches them.

const INCOMING_TRACE = '0af7651916cd43dd8448eb211c80319c'
const INCOMING_SPAN = 'b7ad6b7169203331'
/** Text that goes only into request bodies: it must never be exported. */
const BODY_MARKER = 'BodyMarkerXq7'
/** A secret only ever sent in a URL's query. */
const QUERY_SECRET = 'QuerySecretZk4'

const byName = (spans: ExportedSpan[], name: string) => spans.filter((s) => s.name === name)
const one = (spans: ExportedSpan[], predicate: (s: ExportedSpan) => boolean) => {
  const found = spans.filter(predicate)
  expect(found).toHaveLength(1)
  return found[0] as ExportedSpan
}

/** Whether `span` descends from `ancestor` within the export. */
function descendsFrom(spans: ExportedSpan[], span: ExportedSpan, ancestor: ExportedSpan): boolean {
  const bySpanId = new Map(spans.map((s) => [s.spanId, s]))
  for (
    let at: ExportedSpan | undefined = span;
    at;
    at = at.parentSpanId ? bySpanId.get(at.parentSpanId) : undefined
  ) {
    if (at.parentSpanId === ancestor.spanId && at.traceId === ancestor.traceId) return true
  }
  return false
}

describe.each(storeKinds)('traces on $name', (kind) => {
  const servers: RunningServer[] = []
  const receivers: Array<Receiver | OtlpReceiver> = []
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.end()
    for (const r of receivers.splice(0)) await r.close()
  })

  it('exports request, store, group commit and webhook attempt spans, linked, when the server stops; never a secret or a body', async () => {
    const collector = await startOtlpReceiver()
    const hooks = await startReceiver()
    receivers.push(collector, hooks)
    const tokenFile = join(tempDir(), 'token')
    const server = await startServer(
      [
        '--database-url',
        await kind.freshUrl(),
        '--bootstrap-token-file',
        tokenFile,
        '--webhook-allow-private-urls',
        '--max-event-loop-delay',
        'off',
        '--log-level',
        'debug',
      ],
      // Nothing leaves before the stop: what arrives was flushed by it.
      tracingEnv(collector, { OTEL_BSP_SCHEDULE_DELAY: '600000' }),
    )
    servers.push(server)
    const token = readFileSync(tokenFile, 'utf8').trim()
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      })

    const subscribed = await call('POST', '/webhooks', { url: hooks.url, events: ['plant.created'] })
    expect(subscribed.status).toBe(201)
    const { secret } = (await subscribed.json()) as { secret: string }

    const traced = await call(
      'POST',
      '/plants',
      { id: 1, name: `${BODY_MARKER}-1` },
      { traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` },
    )
    expect(traced.status).toBe(200)
    // Several at once, so that one group commit usually answers more than one of them.
    const together = await Promise.all(
      [2, 3, 4, 5].map((id) => call('POST', '/plants', { id, name: `${BODY_MARKER}-${id}` })),
    )
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect((await call('GET', `/plants/1?access_token=${QUERY_SECRET}`)).status).toBe(200)
    const bad = await call('POST', '/plants', undefined, {})
    await bad.body?.cancel()
    const badJson = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"id": 6, "name": "${BODY_MARKER}", oops`,
    })
    expect(badJson.status).toBe(400)

    const attempts = await hooks.waitFor(5)
    expect(await server.stop('SIGTERM')).toBe(0)

    const spans = collector.spans()
    const raw = collector.raw()
    // The request with a traceparent continues its trace.
    const request = one(spans, (s) => s.name === 'POST /plants' && s.traceId === INCOMING_TRACE)
    expect(request.parentSpanId).toBe(INCOMING_SPAN)
    expect(request.kind).toBe(2)
    expect(request.attributes).toMatchObject({
      'http.route': '/plants',
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.path': '/plants',
    })
    // Its store call waits for a group commit, and each links to the other.
    const create = one(spans, (s) => s.name === 'plants.create' && s.traceId === INCOMING_TRACE)
    expect(descendsFrom(spans, create, request)).toBe(true)
    const commitName = `${kind.name === 'sqlite' ? 'sqlite' : 'postgresql'} group commit`
    const commits = byName(spans, commitName)
    const commit = one(commits, (c) => create.links.some((l) => l.spanId === c.spanId))
    expect(commit.links).toContainEqual({ traceId: create.traceId, spanId: create.spanId })
    // Every create's store call links to the commit that answered it.
    const creates = byName(spans, 'plants.create')
    expect(creates).toHaveLength(5)
    for (const c of creates)
      expect(commits.some((m) => c.links.some((l) => l.spanId === m.spanId))).toBe(true)
    // A commit counts the writes it holds, each of them linked: the four creates sent together
    // usually share one, but a busy machine may commit each alone, so that is not required.
    for (const m of commits.filter((c) => creates.some((r) => r.links.some((l) => l.spanId === c.spanId))))
      expect(Number(m.attributes['db.operation.batch.size'])).toBe(
        creates.filter((r) => r.links.some((l) => l.spanId === m.spanId)).length,
      )

    // Each webhook attempt is a trace of its own, linked to the request that caused it, and its
    // traceparent went out with it.
    const sent = byName(spans, 'webhook attempt')
    expect(sent).toHaveLength(5)
    const fromTraced = one(sent, (s) => s.links.some((l) => l.traceId === INCOMING_TRACE))
    expect(fromTraced.traceId).not.toBe(INCOMING_TRACE)
    expect(fromTraced.attributes).toMatchObject({ 'webhook.attempt': 1, 'http.response.status_code': 200 })
    const headers = attempts.map((a) => a.headers.traceparent)
    for (const s of sent) expect(headers).toContain(`00-${s.traceId}-${s.spanId}-01`)
    for (const s of sent) {
      const cause = s.links[0]
      expect(spans.some((r) => r.name === 'POST /plants' && r.traceId === cause?.traceId)).toBe(true)
    }

    // A query is never recorded, nor a token, a signing secret or a body.
    const read = one(spans, (s) => s.name === 'GET /plants/:id')
    expect(read.attributes['url.path']).toBe('/plants/1')
    expect(byName(spans, 'POST /plants').map((s) => s.attributes['http.response.status_code'])).toContain(400)
    for (const never of [
      token,
      // The secret alone, as a token reads pst_<public id>_<secret>; a secret may hold '_' itself.
      token.split('_').slice(2).join('_'),
      secret,
      QUERY_SECRET,
      BODY_MARKER,
      'oops',
    ]) {
      expect(raw).not.toContain(never)
    }
    expect(spans.every((s) => s.status.message === undefined)).toBe(true)

    // The log line of that request carries its request id and trace id together.
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const logged = lines.find((l) => l.traceId === INCOMING_TRACE && l.msg === 'request completed')
    expect(logged?.reqId).toEqual(expect.any(String))
    expect(logged?.spanId).toBe(request.spanId)
  })
})

describe('traces beyond one server process', () => {
  const servers: RunningServer[] = []
  const receivers: OtlpReceiver[] = []
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.end()
    for (const r of receivers.splice(0)) await r.close()
  })

  it('each worker of --workers 2 exports its own spans', async () => {
    const collector = await startOtlpReceiver()
    receivers.push(collector)
    const tokenFile = join(tempDir(), 'token')
    const server = await startServer(
      ['--workers', '2', '--database-url', await sqliteKind.freshUrl(), '--bootstrap-token-file', tokenFile],
      tracingEnv(collector, { OTEL_BSP_SCHEDULE_DELAY: '600000' }),
    )
    servers.push(server)
    const token = readFileSync(tokenFile, 'utf8').trim()
    // New connections each, which the primary hands to its workers in turn.
    for (let id = 1; id <= 8; id++) {
      const res = await fetch(`${server.url}/plants/${id}`, {
        headers: { authorization: `Bearer ${token}`, connection: 'close' },
      })
      expect(res.status).toBe(404)
    }
    expect(await server.stop('SIGTERM')).toBe(0)
    const reads = byName(collector.spans(), 'GET /plants/:id')
    expect(reads).toHaveLength(8)
    expect(new Set(reads.map((s) => s.resource['process.pid'])).size).toBe(2)
    expect(reads.every((s) => s.resource['service.name'] === 'plantstore')).toBe(true)
  })

  it('import and export are a span each, the import with one per batch; OTEL_SERVICE_NAME names them', async () => {
    const collector = await startOtlpReceiver()
    receivers.push(collector)
    const dir = tempDir()
    const url = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'plants.jsonl')
    writeFileSync(file, [1, 2, 3].map((id) => `{"id":${id},"name":"${BODY_MARKER}"}\n`).join(''))
    const env = tracingEnv(collector, { OTEL_SERVICE_NAME: 'plantstore-cli' })
    const imported = await runCli(['import', file, '--batch-size', '2', '--database-url', url], env)
    expect(imported.code).toBe(0)
    const exported = await runCli(['export', '--database-url', url], env)
    expect(exported.code).toBe(0)
    const spans = collector.spans()
    const command = one(spans, (s) => s.name === 'plantstore import')
    const batches = byName(spans, 'import batch')
    expect(batches.map((b) => b.attributes['plantstore.import.batch.size'])).toEqual([2, 1])
    for (const b of batches) expect(b.parentSpanId).toBe(command.spanId)
    expect(one(spans, (s) => s.name === 'plantstore export').attributes['plantstore.export.plants']).toBe(3)
    expect(spans.every((s) => s.resource['service.name'] === 'plantstore-cli')).toBe(true)
    expect(collector.raw()).not.toContain(BODY_MARKER)
  })

  it('serve refuses an OTLP protocol it cannot export, with exit 2', async () => {
    const result = await runCli(['serve', '--port', '0', '--database-url', 'sqlite::memory:'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('OTEL_EXPORTER_OTLP_PROTOCOL')
  })
})
