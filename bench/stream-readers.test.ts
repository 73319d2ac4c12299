import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, describe, expect, it } from 'vitest'
import type { StreamReading } from './streams.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/**
 * A stand-in for the service: POST /plants stores a change and sends it to every open stream of
 * GET /events/stream (`id: <seq>`), which resumes after Last-Event-ID. `refuse` answers streams 403.
 */
async function standIn({ refuse = false } = {}) {
  const frames: string[] = []
  const streams = new Set<ServerResponse>()
  const resumedFrom: string[] = []
  const change = (plant: string) => {
    const seq = frames.length + 1
    frames.push(
      `id: ${seq}\ndata: {"cursor":"${seq}","type":"plant.created","before":null,"after":${plant}}\n\n`,
    )
    for (const stream of streams) stream.write(frames[seq - 1])
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/events/stream') {
      if (refuse || req.headers.authorization !== 'Bearer read') {
        res.writeHead(403).end('{"error":40301,"message":"no"}')
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(': ok\n\n')
      const after = req.headers['last-event-id']
      if (typeof after === 'string') {
        resumedFrom.push(after)
        res.write(frames.slice(Number(after)).join(''))
      }
      streams.add(res)
      res.once('close', () => streams.delete(res))
      return
    }
    if (req.method === 'POST' && req.url === '/plants' && req.headers.authorization === 'Bearer write') {
      let body = ''
      req.setEncoding('utf8').on('data', (c: string) => {
        body += c
      })
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' }).end(body)
        change(body)
      })
      return
    }
    res.writeHead(404).end()
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  cleanups.push(() => {
    for (const stream of streams) stream.destroy()
    server.close()
  })
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, frames, streams, change, resumedFrom }
}

/** Starts bench/stream-readers.mjs; its output line by line. */
function readers(url: string, count: number) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(import.meta.dirname, 'stream-readers.mjs'),
      ...['--url', url, '--token', 'read', '--probe-token', 'write', '--readers', String(count)],
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  )
  cleanups.unshift(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr += c
  })
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const line = (prefix: string) =>
    new Promise<string>((resolve) => {
      lines.on('line', (l) => {
        if (l.startsWith(prefix)) resolve(l.slice(prefix.length))
      })
    })
  return { child, line, stderr: () => stderr, send: (command: string) => child.stdin?.write(`${command}\n`) }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The changes from the first probe's to the last one's, both included, as the stand-in sent them. */
function betweenProbes(frames: string[]): number {
  const probes = frames.flatMap((f, i) => (f.includes('stream probe ') ? [i] : []))
  return (probes.at(-1) as number) - (probes[0] as number) + 1
}

// The readers stand for the stream clients whose cost the create-streams scenario measures, and
// their probes for a change's time to them: what they report is what the verdicts judge.
describe('bench/stream-readers.mjs', () => {
  it('holds its streams open, times each probe at every reader, and counts the changes each read', async () => {
    const service = await standIn()
    const run = readers(service.url, 5)
    expect(await run.line('open ')).toBe('5')
    expect(service.streams.size).toBe(5)
    const reported = run.line('BENCH_STREAMS ')
    run.send('start')
    // Other changes between the probes, as the load's creates are.
    for (let i = 0; i < 20; i++) {
      service.change(`{"id":${i},"name":"Monstera"}`)
      await sleep(15)
    }
    run.send('stop')
    const reading = JSON.parse(await reported) as StreamReading
    expect(reading.probes.sent).toBeGreaterThanOrEqual(3)
    expect(reading).toMatchObject({ readers: 5, probes: { failed: 0 }, missing: 0, unordered: 0, ends: 0 })
    // Every probe but the last (sent after the load) is timed at every reader.
    expect(reading.latencyMs).toHaveLength((reading.probes.sent - 1) * 5)
    for (const ms of reading.latencyMs) expect(ms).toBeGreaterThanOrEqual(0)
    expect(Math.max(...reading.latencyMs)).toBeLessThan(1000)
    const read = betweenProbes(service.frames)
    expect(read).toBeGreaterThan(reading.probes.sent)
    expect(reading.changesRead).toEqual({ min: read, max: read })
  }, 30_000)

  it('opens an ended stream again from its last change, and counts the end', async () => {
    const service = await standIn()
    const run = readers(service.url, 3)
    await run.line('open ')
    const reported = run.line('BENCH_STREAMS ')
    run.send('start')
    for (let i = 0; i < 10; i++) {
      service.change(`{"id":${i},"name":"Monstera"}`)
      await sleep(10)
    }
    const seen = service.frames.length
    // The service ends one stream, as a draining instance or a slow reader's would be.
    ;[...service.streams][0]?.end()
    await sleep(50)
    for (let i = 10; i < 20; i++) {
      service.change(`{"id":${i},"name":"Monstera"}`)
      await sleep(10)
    }
    run.send('stop')
    const reading = JSON.parse(await reported) as StreamReading
    expect(reading.ends).toBe(1)
    expect(Number(service.resumedFrom[0])).toBeGreaterThanOrEqual(seen)
    // Resumed right after its last change: it read the same changes as the others, once each.
    const read = betweenProbes(service.frames)
    expect(reading).toMatchObject({ missing: 0, unordered: 0, changesRead: { min: read, max: read } })
  }, 30_000)

  it('exits 1 when a stream is refused', async () => {
    const service = await standIn({ refuse: true })
    const run = readers(service.url, 2)
    const [code] = await once(run.child, 'exit')
    expect(code).toBe(1)
    expect(run.stderr()).toContain('GET /events/stream responded 403')
  }, 30_000)
})
