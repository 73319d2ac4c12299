// Webhook delivery benchmark: a real server process on a fresh SQLite file, a healthy receiver on
// 127.0.0.1, and creates at a fixed concurrency for a bounded time. Reports the time from each
// create's 200 to the arrival of its webhook (p50, p99), and deliveries per second.
//
//   npm run bench:webhooks     (BENCH_SECONDS=5 BENCH_CONCURRENCY=16 BENCH_SUBSCRIBERS=1 by default)
// With several subscribers each create fans out to each of them (one receiver, one path each);
// BENCH_SUBSCRIBERS=0 gives the create rate without webhooks, for comparison. BENCH_WORKERS=2 runs
// the server as a cluster (the creators' connections spread over the workers; one of them sends).
// BENCH_DATABASE_URL=postgres://… runs it on that PostgreSQL database instead, in a schema of its own
// (plantstore_bench_PID_1), dropped at the end.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchSchema } from './postgres.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1)
const WORKERS = process.env.BENCH_WORKERS ?? '1'
const ROOT = fileURLToPath(new URL('../', import.meta.url))

const arrived = new Map<string, number>()
let duplicates = 0
const receiver = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (c: string) => {
    body += c
  })
  req.on('end', () => {
    const plant = /"data":\{"id":(-?\d+)/.exec(body)?.[1]
    if (plant !== undefined) {
      const id = `${req.url}:${plant}`
      if (arrived.has(id)) duplicates++
      else arrived.set(id, performance.now())
    }
    res.writeHead(204).end()
  })
})
receiver.listen(0, '127.0.0.1')
await once(receiver, 'listening')
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const dir = join(tmpdir(), `plantstore-bench-${process.pid}-${Date.now()}`)
mkdirSync(dir, { recursive: true })
// Empty, as a fresh file is: serve then makes the one token the creators use.
const schema = process.env.BENCH_DATABASE_URL ? await benchSchema(process.env.BENCH_DATABASE_URL) : undefined
const databaseUrl = schema?.url ?? `sqlite:${join(dir, 'bench.db')}`
const tokenFile = join(dir, 'token')
const server = spawn(
  process.execPath,
  [
    ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
    `${ROOT}bin/plantstore`,
    'serve',
    '--port',
    '0',
    '--database-url',
    databaseUrl,
    '--bootstrap-token-file',
    tokenFile,
    '--webhook-allow-private-urls',
    // The creators share one token: the default per-token limit would refuse most of them with 429.
    '--rate-limit',
    'off',
    '--workers',
    WORKERS,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
let out = ''
server.stdout.setEncoding('utf8')
const base = await new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20_000)
  server.stdout.on('data', (c: string) => {
    out += c
    const m = /listening on (http:\/\/[^"\s]+)/.exec(out)
    if (m) {
      clearTimeout(timer)
      resolve(m[1] as string)
    }
  })
})
const token = readFileSync(tokenFile, 'utf8').trim()
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

for (let i = 0; i < SUBSCRIBERS; i++) {
  const hook = await fetch(`${base}/webhooks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `${receiverUrl}/${i}`, events: ['plant.created'] }),
  })
  if (hook.status !== 201) throw new Error(`subscribe failed: ${hook.status}`)
  await hook.arrayBuffer()
}

const respondedAt = new Map<string, number>()
let next = 1
let failures = 0
const started = performance.now()
const stopAt = started + SECONDS * 1000
async function worker(): Promise<void> {
  while (performance.now() < stopAt) {
    const id = String(next++)
    const res = await fetch(`${base}/plants`, {
      method: 'POST',
      headers,
      body: `{"id":${id},"name":"bench ${id}"}`,
    })
    await res.arrayBuffer()
    if (res.status === 200) respondedAt.set(id, performance.now())
    else failures++
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker))
const createsDone = performance.now()

// Wait (bounded) for the deliveries still on their way.
const waitUntil = performance.now() + 30_000
while (arrived.size < respondedAt.size * SUBSCRIBERS && performance.now() < waitUntil) {
  await new Promise((r) => setTimeout(r, 20))
}
const finished = performance.now()

const latencies = [...arrived]
  .map(([key, at]) => at - (respondedAt.get(key.slice(key.lastIndexOf(':') + 1)) ?? Number.NaN))
  .filter((v) => !Number.isNaN(v))
  .sort((a, b) => a - b)
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN
const lastArrival = Math.max(...arrived.values())

const report = {
  seconds: SECONDS,
  concurrency: CONCURRENCY,
  subscribers: SUBSCRIBERS,
  workers: WORKERS,
  creates: respondedAt.size,
  createFailures: failures,
  createsPerSecond: Math.round(respondedAt.size / ((createsDone - started) / 1000)),
  delivered: arrived.size,
  duplicates,
  missing: respondedAt.size * SUBSCRIBERS - arrived.size,
  deliveriesPerSecond: arrived.size === 0 ? 0 : Math.round(arrived.size / ((lastArrival - started) / 1000)),
  createToDeliveryMs: {
    p50: Math.round(pct(50) * 10) / 10,
    p90: Math.round(pct(90) * 10) / 10,
    p99: Math.round(pct(99) * 10) / 10,
    max: Math.round((latencies.at(-1) ?? NaN) * 10) / 10,
  },
  drainMs: Math.round(finished - createsDone),
}
console.log(JSON.stringify(report, null, 2))

server.kill('SIGTERM')
await once(server, 'exit')
await schema?.drop()
receiver.close()
rmSync(dir, { recursive: true, force: true })
