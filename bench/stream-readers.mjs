// The stream readers of the benchmark's create-streams scenario (bench/streams.ts): one process, apart
// from the service and from wrk, holding N open streams of GET /events/stream and reading every change
// each delivers, and a probe that creates a plant of its own every PROBE_EVERY_MS, one at a time, and
// times its change's arrival at every reader. The time a change takes from its create's response to a
// reader is then measured on one clock, this process's.
//
//   node bench/stream-readers.mjs --url http://127.0.0.1:PORT --token pst_… --probe-token pst_… [--readers 100]
//
// `--token` reads the streams (events:read), `--probe-token` creates the probes (plants:write). Prints
// `open N` once every stream has its response's status and headers, then reads commands on stdin, one
// a line:
//   start  from here on, counts what the readers read and sends the probes
//   stop   stops the probes, sends one last probe after the load, waits for every probe's change to
//          reach every reader (at most WAIT_MS) and prints one line `BENCH_STREAMS {…}` (below)
// A stream that ends is opened again at once with Last-Event-ID, as a browser's EventSource would,
// and counted. Exits 1 when a stream is refused (its status is not 200), 0 on SIGTERM or stdin's end.
import { randomBytes } from 'node:crypto'
import { Agent, get, request } from 'node:http'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { FrameScanner } from './sse-frames.mjs'

/** Between one probe's response and the next probe's request, at most. */
const PROBE_EVERY_MS = 50
/** How long `stop` waits for the probes' changes to reach every reader. */
const WAIT_MS = 5000
/** Written into a probe's name, with its number: the text a reader looks for in each chunk. */
const MARKER = 'stream probe '

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    'probe-token': { type: 'string' },
    readers: { type: 'string', default: '100' },
  },
})
const count = Number(values.readers)
if (!values.url || !values.token || !values['probe-token'] || !(Number.isInteger(count) && count >= 1)) {
  process.stderr.write('stream-readers: --url, --token and --probe-token are required; --readers ≥ 1\n')
  process.exit(2)
}
const streamUrl = new URL('/events/stream', values.url)

/**
 * One probe: when its create's response ended, and for each reader when its change arrived and how
 * many changes that reader had read by then (that one included); NaN where it has not arrived.
 */
function newProbe() {
  return {
    status: 0,
    respondedAt: Number.NaN,
    arrivedAt: new Float64Array(count).fill(Number.NaN),
    framesAt: new Float64Array(count).fill(Number.NaN),
  }
}
const probes = []
let measuring = false
let closing = false

const readers = Array.from({ length: count }, (_, index) => {
  const reader = {
    index,
    ends: 0,
    response: undefined,
    scanner: new FrameScanner(MARKER, (tag, frames) => {
      const probe = probes[tag]
      if (probe === undefined || !Number.isNaN(probe.arrivedAt[index])) return
      probe.arrivedAt[index] = performance.now()
      probe.framesAt[index] = frames
    }),
  }
  return reader
})

/** Opens (or opens again, from its last change) a reader's stream; resolves once its headers are in. */
function open(reader) {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${values.token}`, accept: 'text/event-stream' }
    if (reader.scanner.lastId !== undefined) headers['last-event-id'] = reader.scanner.lastId
    let responded = false
    // A connection of its own: a stream holds it for as long as it is open.
    const req = get(streamUrl, { headers, agent: false }, (res) => {
      responded = true
      if (res.statusCode !== 200) {
        res.resume()
        reject(new Error(`GET /events/stream responded ${res.statusCode}`))
        return
      }
      reader.scanner.reset()
      reader.response = res
      res.on('data', (chunk) => reader.scanner.push(chunk))
      res.once('close', () => {
        if (closing) return
        if (measuring) reader.ends++
        open(reader).catch(fail)
      })
      resolve()
    })
    // After the response, an error is the stream's end, met by 'close' above.
    req.once('error', (error) => {
      if (!responded) reject(error)
    })
  })
}

function fail(error) {
  if (closing) return
  process.stderr.write(`stream-readers: ${error.message}\n`)
  process.exit(1)
}

/** A plant id no other request of the run sends: 63 random bits, zero excluded. */
function randomId() {
  const id = randomBytes(8).readBigUInt64BE() & (2n ** 63n - 1n)
  return id === 0n ? 1n : id
}

// One connection for the probes, kept open: one create at a time.
const agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** Creates probe number `probes.length`; resolves once its response has ended. */
function sendProbe() {
  const tag = probes.length
  const probe = newProbe()
  probes.push(probe)
  const body = `{"id":${randomId()},"name":"${MARKER}${String(tag).padStart(7, '0')}"}`
  return new Promise((resolve) => {
    const req = request(
      new URL('/plants', values.url),
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${values['probe-token']}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume()
        res.once('end', () => {
          probe.respondedAt = performance.now()
          probe.status = res.statusCode ?? 0
          resolve()
        })
      },
    )
    req.once('error', () => resolve())
    req.end(body)
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

let probing
/** Probes one after another until `measuring` is false. */
async function probeLoop() {
  while (measuring) {
    const started = performance.now()
    await sendProbe()
    const rest = PROBE_EVERY_MS - (performance.now() - started)
    if (rest > 0 && measuring) await sleep(rest)
  }
}

function start() {
  for (const reader of readers) reader.ends = 0
  measuring = true
  probing = probeLoop()
}

const ok = (probe) => probe.status >= 200 && probe.status < 300

async function stop() {
  measuring = false
  await probing
  const timed = probes.length
  // Sent after the load's last response: once it has reached a reader, every change of the load has.
  await sendProbe()
  const deadline = performance.now() + WAIT_MS
  const arrived = () => probes.every((p) => !ok(p) || p.arrivedAt.every((t) => !Number.isNaN(t)))
  while (!arrived() && performance.now() < deadline) await sleep(10)

  const latencyMs = []
  let missing = 0
  probes.forEach((probe, tag) => {
    if (!ok(probe)) return
    for (const at of probe.arrivedAt) {
      if (Number.isNaN(at)) missing++
      // A change can reach a reader before its create's response reaches the probe: no time at all.
      else if (tag < timed) latencyMs.push(Math.round(Math.max(0, at - probe.respondedAt) * 100) / 100)
    }
  })
  // What each reader read from the first probe's change to the last one's, both included: the same
  // changes for every reader that missed none and read none twice.
  const [first, last] = [probes[0], probes[probes.length - 1]]
  const read = readers.map((r) => last.framesAt[r.index] - first.framesAt[r.index] + 1)
  const counted = read.filter((n) => !Number.isNaN(n))
  const result = {
    readers: count,
    probes: { sent: probes.length, failed: probes.filter((p) => !ok(p)).length },
    latencyMs,
    missing,
    changesRead: counted.length === 0 ? null : { min: Math.min(...counted), max: Math.max(...counted) },
    unordered: readers.reduce((sum, r) => sum + r.scanner.unordered, 0),
    ends: readers.reduce((sum, r) => sum + r.ends, 0),
  }
  process.stdout.write(`BENCH_STREAMS ${JSON.stringify(result)}\n`)
}

function close() {
  closing = true
  measuring = false
  for (const reader of readers) reader.response?.destroy()
  agent.destroy()
  process.exit(0)
}
process.once('SIGTERM', close)
process.once('SIGINT', close)

// One after another: a hundred connections at once would be refused by a small listen backlog.
for (const reader of readers) await open(reader).catch(fail)
process.stdout.write(`open ${count}\n`)

const commands = createInterface({ input: process.stdin })
commands.on('line', (line) => {
  if (line === 'start') start()
  else if (line === 'stop') stop().catch(fail)
})
commands.once('close', close)
