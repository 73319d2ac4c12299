// The batch scenario: plants a second of POST /plants/batch against those of single creates sent one
// after another over one connection, as a script loading a catalogue one request per plant does. Not
// a wrk load: what is compared is one client's throughput, request after request.
import { randomBytes } from 'node:crypto'
import { Agent, request } from 'node:http'
import { fmt } from './format.js'
import { median } from './median.js'
import type { Options } from './options.js'
import { percentile } from './percentile.js'
import { plantJson } from './plant-names.js'
import { issueToken, type Server, startService } from './processes.js'
import { freshDatabase } from './setup.js'

/** Plants per round on each side: a batch route's most, and as many single creates. */
export const BATCH_SIZE = 1000
/** Batches per round: one takes a few tens of milliseconds, too short a time alone. */
export const BATCHES_PER_ROUND = 3

/** One side of a round: its requests, one after another. */
export interface BatchRun {
  plants: number
  requests: number
  seconds: number
  plantsPerSecond: number
  p50Ms: number
  p99Ms: number
  /** Responses other than a 2xx. */
  errors: number
}

export interface BatchRound {
  singles: BatchRun
  batches: BatchRun
  /** The batches' plants a second ÷ the single creates'. */
  ratio: number
}

export interface BatchResult {
  workers: string
  skipped?: string
  rounds: BatchRound[]
  /** The median of the rounds' ratios. */
  ratio?: number
}

/** A plant id no other request of the run sends: 63 random bits, zero excluded. */
function randomId(): bigint {
  const id = randomBytes(8).readBigUInt64BE() & (2n ** 63n - 1n)
  return id === 0n ? 1n : id
}

/** Sends one request on the agent's one connection; resolves with its status and its time in ms. */
function post(server: Server, agent: Agent, token: string, path: string, body: string) {
  const started = process.hrtime.bigint()
  return new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume()
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Sends the bodies one after another and sums up what they took. */
async function send(
  server: Server,
  agent: Agent,
  token: string,
  path: string,
  bodies: Array<{ body: string; plants: number }>,
): Promise<BatchRun> {
  const times: number[] = []
  let errors = 0
  const started = process.hrtime.bigint()
  for (const { body } of bodies) {
    const { status, ms } = await post(server, agent, token, path, body)
    times.push(ms)
    if (status < 200 || status > 299) errors++
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const plants = bodies.reduce((sum, b) => sum + b.plants, 0)
  return {
    plants,
    requests: bodies.length,
    seconds,
    plantsPerSecond: plants / seconds,
    p50Ms: median(times),
    p99Ms: percentile(times, 99) as number,
    errors,
  }
}

let made = 0
/** `count` new plants, each a JSON object's text. */
const plants = (count: number) => Array.from({ length: count }, () => plantJson(randomId(), ++made))

/** 1000 single creates and BATCHES_PER_ROUND batches of 1000, one after the other. */
async function measureRound(server: Server, agent: Agent, token: string, batchesFirst: boolean) {
  const singles = () =>
    send(
      server,
      agent,
      token,
      '/plants',
      plants(BATCH_SIZE).map((body) => ({ body, plants: 1 })),
    )
  const batches = () =>
    send(
      server,
      agent,
      token,
      '/plants/batch',
      Array.from({ length: BATCHES_PER_ROUND }, () => ({
        body: `{"plants":[${plants(BATCH_SIZE).join(',')}]}`,
        plants: BATCH_SIZE,
      })),
    )
  const [first, second] = batchesFirst
    ? [await batches(), await singles()]
    : [await singles(), await batches()]
  return batchesFirst ? { singles: second, batches: first } : { singles: first, batches: second }
}

/**
 * On an empty store with `workers`: an unmeasured round first when --warmup asks for one, then
 * --rounds rounds, the side that goes first turning each round. A build without the batch route is
 * skipped.
 */
export async function measureBatch(workers: string, options: Options): Promise<BatchResult> {
  const setup = await freshDatabase(options.databaseUrl)
  let service: Server | undefined
  // One connection, kept open: every request of a side goes over it, one after the other.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const token = issueToken(setup.url)
    service = await startService(setup.url, workers)
    // Without the route, POST /plants/batch reaches /plants/{id}, which takes no POST.
    const probe = await post(service, agent, token, '/plants/batch', '{"plants":[]}')
    if (probe.status === 404 || probe.status === 405) {
      return { workers, skipped: 'route not in this build', rounds: [] }
    }
    if (options.warmup > 0) await measureRound(service, agent, token, false)
    const rounds: BatchRound[] = []
    for (let round = 1; round <= options.rounds; round++) {
      process.stderr.write(`bench: batch creates, workers ${workers}, round ${round} of ${options.rounds}\n`)
      const { singles, batches } = await measureRound(service, agent, token, round % 2 === 0)
      rounds.push({ singles, batches, ratio: batches.plantsPerSecond / singles.plantsPerSecond })
    }
    return { workers, rounds, ratio: median(rounds.map((r) => r.ratio)) }
  } finally {
    agent.destroy()
    const code = await service?.stop()
    if (code !== undefined && code !== 0)
      process.stderr.write(`bench: plantstore exited with ${code} on SIGTERM\n`)
    await setup.cleanup()
  }
}

/** The batch results as the report prints them: one line a round. */
export function batchTable(results: BatchResult[]): string {
  const lines = [
    '| scenario | workers | round | single creates plants/s | single p50 ms | single p99 ms | batch plants/s | batch p50 ms | batch ÷ single | errors |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const result of results) {
    if (result.skipped) {
      lines.push(`| batch | ${result.workers} | skipped: ${result.skipped} |${' |'.repeat(7)}`)
      continue
    }
    result.rounds.forEach(({ singles, batches, ratio }, i) => {
      lines.push(
        `| batch | ${result.workers} | ${i + 1} | ${fmt(singles.plantsPerSecond)} | ${fmt(singles.p50Ms, 2)} | ${fmt(singles.p99Ms, 2)} | ${fmt(batches.plantsPerSecond)} | ${fmt(batches.p50Ms, 2)} | ${fmt(ratio, 2)} | ${fmt(singles.errors + batches.errors)} |`,
      )
    })
  }
  return lines.join('\n')
}
