// A bounded soak: a few minutes of mixed traffic, good and bad, against a real server process, then a
// report of the server's memory at start and end and of every response that was not precise.
//   npm run soak                  (3 minutes)
//   SOAK_SECONDS=30 npm run soak  (shorter)
// Exits 1 when any response was a 5xx, not the Error shape, or the connection failed, or when resident
// memory grew by more than half between the first and last minute's samples.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const seconds = Number(process.env.SOAK_SECONDS ?? 180)
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 8)
const dir = mkdtempSync(join(tmpdir(), 'plantstore-soak-'))
const tokenFile = join(dir, 'token')

const server = spawn(
  './bin/plantstore',
  [
    'serve',
    '--port',
    '0',
    '--database-url',
    `sqlite:${join(dir, 'soak.db')}`,
    '--bootstrap-token-file',
    tokenFile,
    '--rate-limit',
    'off',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
let log = ''
const url = await new Promise<string>((resolve, reject) => {
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk
    const match = /listening on (http:\/\/[^"\s]+)/.exec(log)
    if (match) resolve(match[1] as string)
    // Keep only the tail: the buffer must not grow with the run.
    if (log.length > 10_000) log = log.slice(-1000)
  })
  server.on('exit', (code) => reject(new Error(`server exited with ${code}`)))
})
const token = readFileSync(tokenFile, 'utf8').trim()
const port = Number(new URL(url).port)

const counts = new Map<string, number>()
const failures: string[] = []
const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1)
const fail = (what: string) => {
  bump('failure')
  if (failures.length < 20) failures.push(what)
}

function isErrorShape(text: string): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    return Object.keys(body).sort().join(',') === 'error,message' && typeof body.error === 'number'
  } catch {
    return false
  }
}

let nextId = 1
const auth = { authorization: `Bearer ${token}` }
const json = { ...auth, 'content-type': 'application/json' }
type Shot = () => { path: string; init: RequestInit }
const shots: Shot[] = [
  () => ({
    path: '/plants',
    init: { method: 'POST', headers: json, body: `{"id": ${nextId++}, "name": "soak", "tag": "t"}` },
  }),
  () => ({ path: `/plants/${Math.floor(Math.random() * nextId)}`, init: { headers: auth } }),
  () => ({ path: `/plants/${Math.floor(Math.random() * 1e6)}`, init: { headers: auth } }),
  () => ({ path: '/plants', init: { method: 'POST', headers: json, body: '{"id": 1.5, "name": ' } }),
  () => ({
    path: '/plants',
    init: { method: 'POST', headers: json, body: `{"id": 1, "pad": "${'x'.repeat(70_000)}"}` },
  }),
  () => ({
    path: '/plants',
    init: { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' },
  }),
  () => ({
    path: '/plants/1',
    init: {
      headers: {
        authorization: `Bearer pst_${Math.random().toString(16).slice(2, 18).padEnd(16, '0')}_nope`,
      },
    },
  }),
  () => ({ path: `/random/${Math.random().toString(36).slice(2)}`, init: {} }),
  () => ({ path: '/plants/abc', init: { headers: auth } }),
  () => ({ path: '/plants', init: { method: 'DELETE' } }),
  () => ({ path: '/healthz', init: {} }),
]

async function rawGarbage(): Promise<void> {
  await new Promise<void>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write('GET /\x00\x01 HTTP/1.1\r\n\r\n'))
    socket.setTimeout(5000, () => socket.destroy())
    socket.on('data', (data) => {
      if (!/^HTTP\/1\.1 400 /.test(data.toString('latin1'))) fail('garbage did not get 400')
    })
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
  bump('raw garbage')
}

async function worker(until: number): Promise<void> {
  while (Date.now() < until) {
    if (Math.random() < 0.02) {
      await rawGarbage()
      continue
    }
    const shot = (shots[Math.floor(Math.random() * shots.length)] as Shot)()
    try {
      const res = await fetch(url + shot.path, shot.init)
      const text = await res.text()
      bump(String(res.status))
      if (res.status >= 500) fail(`${res.status} for ${shot.path}`)
      else if (res.status >= 400 && !isErrorShape(text))
        fail(`${res.status} not Error-shaped for ${shot.path}`)
    } catch (error) {
      fail(`${shot.path}: ${(error as Error).message}`)
    }
  }
}

async function rss(): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: auth })
  const match = /^plantstore_process_resident_memory_bytes (\d+)/m.exec(await res.text())
  return Number(match?.[1])
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const started = Date.now()
const until = started + seconds * 1000
const samples: Array<{ t: number; rss: number }> = []
const sampler = setInterval(async () => {
  samples.push({ t: Date.now() - started, rss: await rss() })
  const last = samples[samples.length - 1]
  process.stderr.write(
    `soak: ${Math.round((last?.t ?? 0) / 1000)}s rss ${mb(last?.rss ?? 0)}, ${[...counts.values()].reduce((a, b) => a + b, 0)} requests\n`,
  )
}, 10_000)
samples.push({ t: 0, rss: await rss() })
await Promise.all(Array.from({ length: concurrency }, () => worker(until)))
clearInterval(sampler)
samples.push({ t: Date.now() - started, rss: await rss() })

server.kill('SIGTERM')
const exitCode = await new Promise<number | null>((resolve) => server.on('exit', resolve))
rmSync(dir, { recursive: true, force: true })

// Compare the settled part of the run: the first samples include warm-up (JIT, caches, SQLite pages).
const window = Math.max(1, Math.floor(samples.length / 4))
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const early = median(samples.slice(1, 1 + window).map((s) => s.rss))
const late = median(samples.slice(-window).map((s) => s.rss))
const total = [...counts.values()].reduce((a, b) => a + b, 0)
const report = {
  seconds,
  concurrency,
  requests: total,
  byStatus: Object.fromEntries([...counts.entries()].sort()),
  errors: counts.get('failure') ?? 0,
  failures,
  rss: {
    start: mb(samples[0]?.rss ?? 0),
    settled: mb(early),
    end: mb(late),
    max: mb(Math.max(...samples.map((s) => s.rss))),
  },
  serverExitCode: exitCode,
}
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
const grew = late > early * 1.5
if (report.errors > 0 || grew || exitCode !== 0) {
  if (grew) process.stderr.write('soak: resident memory grew by more than half\n')
  process.exit(1)
}
