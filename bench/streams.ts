// The create-streams scenario: creates on ascending ids with --stream-readers open streams of
// GET /events/stream against the same creates with none, in the same rounds on the same service, and
// the time a change takes from its create's response to a stream reader. The readers are a process of
// their own (bench/stream-readers.mjs), apart from wrk and the service, and they share the machine
// with both: the CPU they use is reported beside the figures.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Measured } from './figures.js'
import { fmt } from './format.js'
import { type Beside, measure } from './load.js'
import { median } from './median.js'
import type { Options } from './options.js'
import { BENCH, ROOT } from './paths.js'
import { percentile } from './percentile.js'
import { cpuSeconds, issueToken, running, type Server, startService } from './processes.js'
import { STREAMS } from './scenarios.js'
import { freshDatabase } from './setup.js'

/** What the readers' process reports of one measured run (bench/stream-readers.mjs). */
export interface StreamReading {
  readers: number
  /** The probes created one at a time while the load ran, and the one after it; those not a 2xx. */
  probes: { sent: number; failed: number }
  /** For each probe created while the load ran and each reader: ms from its response to its change. */
  latencyMs: number[]
  /** Probes' changes that never reached a reader: each reader and probe counts once. */
  missing: number
  /** Changes each reader read from the first probe's to the last one's: one figure when none missed any. */
  changesRead: { min: number; max: number } | null
  /** Changes read twice or out of order, over all readers. */
  unordered: number
  /** Streams that ended while the load ran (each opened again from its last change). */
  ends: number
}

/** A change's time from its create's response to a reader: p50 and p99 of the samples. */
export interface Latency {
  p50: number
  p99: number
  samples: number
}

export interface StreamsRound {
  /** The creates with no stream open. */
  none: Measured
  /** The same creates with the readers' streams open. */
  streams: Measured
  /** Creates a second with the streams open ÷ with none. */
  ratio: number
  readers: Omit<StreamReading, 'latencyMs'> & {
    latency: Latency | null
    /** The readers' process's CPU while the load ran: 100 is one core busy. */
    cpuPercent: number
  }
  /**
   * Every reader read every change once, in order, and kept its stream open throughout; every probe
   * was created and reached every reader; every create succeeded. A round that was not measured
   * nothing of what the scenario claims.
   */
  intact: boolean
}

export interface StreamsResult {
  workers: string
  readers: number
  skipped?: string
  rounds: StreamsRound[]
  /** The median of the rounds' ratios. */
  ratio?: number
  /** Over every round's samples together. */
  latency?: Latency
}

/** p50 and p99 of a change's time to its readers; null without a sample. */
export function latencyOf(samples: number[]): Latency | null {
  const [p50, p99] = [percentile(samples, 50), percentile(samples, 99)]
  return p50 === undefined || p99 === undefined ? null : { p50, p99, samples: samples.length }
}

/** Whether a round measured what it claims: see StreamsRound.intact. */
export function intact(none: Measured, streams: Measured, reading: StreamReading): boolean {
  const errors = none.non2xx + none.socketErrors + streams.non2xx + streams.socketErrors
  return (
    errors === 0 &&
    reading.ends === 0 &&
    reading.unordered === 0 &&
    reading.missing === 0 &&
    reading.probes.failed === 0 &&
    reading.changesRead !== null &&
    reading.changesRead.min === reading.changesRead.max
  )
}

/** The readers' process with its streams open, and what it reported of the run measured beside it. */
interface Readers {
  beside: Beside
  reading(): { reading: StreamReading; cpuPercent: number }
  stop(): Promise<void>
}

/** Starts the readers' process; resolves once each of its streams has its response's headers. */
async function startReaders(url: string, token: string, probeToken: string, count: number): Promise<Readers> {
  const args = ['--url', url, '--token', token, '--probe-token', probeToken, '--readers', String(count)]
  const child = spawn(process.execPath, [join(BENCH, 'stream-readers.mjs'), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let errors = ''
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    errors += c
  })
  const exited = once(child, 'exit')
  const lines = createInterface({ input: child.stdout })
  const next = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const onLine = (line: string) => {
        if (!line.startsWith(prefix)) return
        lines.off('line', onLine)
        resolve(line.slice(prefix.length))
      }
      lines.on('line', onLine)
      void exited.then(([code]) => reject(new Error(`the stream readers exited with ${code}:\n${errors}`)))
    })
  await next('open ')
  const pid = child.pid as number
  let cpuBefore = 0
  let started = 0n
  let result: { reading: StreamReading; cpuPercent: number } | undefined
  return {
    beside: {
      start: () => {
        cpuBefore = cpuSeconds(pid)
        started = process.hrtime.bigint()
        child.stdin.write('start\n')
      },
      stop: async () => {
        // Read before the readers wait for the last probe: the CPU of the load's time alone.
        const seconds = Number(process.hrtime.bigint() - started) / 1e9
        const cpuPercent = (100 * (cpuSeconds(pid) - cpuBefore)) / seconds
        const reported = next('BENCH_STREAMS ')
        child.stdin.write('stop\n')
        result = { reading: JSON.parse(await reported) as StreamReading, cpuPercent }
      },
    },
    reading: () => {
      if (!result) throw new Error('the stream readers reported nothing')
      return result
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}

/** Whether GET /events/stream opens a stream for this token: 200 and text/event-stream, read no further. */
async function streamOpens(url: string, token: string): Promise<boolean> {
  const aborted = new AbortController()
  try {
    const response = await fetch(`${url}/events/stream`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: aborted.signal,
    })
    return response.ok && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')
  } finally {
    aborted.abort()
  }
}

/**
 * On an empty store with `workers`: --rounds rounds, each loading the service once with no stream
 * open and once with the readers' streams open, the side that goes first turning each round. A build
 * without the stream (or its scope) is skipped.
 */
export async function measureStreams(workers: string, options: Options): Promise<StreamsResult> {
  const count = options.streamReaders
  const setup = await freshDatabase(options.databaseUrl)
  let service: Server | undefined
  try {
    const token = issueToken(setup.url)
    let readToken: string
    try {
      readToken = issueToken(setup.url, ['events:read'])
    } catch {
      return { workers, readers: count, skipped: 'no events:read scope in this build', rounds: [] }
    }
    service = await startService(setup.url, workers)
    if (!(await streamOpens(service.url, readToken))) {
      return { workers, readers: count, skipped: 'route not in this build', rounds: [] }
    }
    const env = { BENCH_TOKEN: token }
    const rounds: StreamsRound[] = []
    const samples: number[] = []
    for (let round = 1; round <= options.rounds; round++) {
      const measured: { none?: Measured; streams?: Measured; reading?: StreamReading; cpuPercent?: number } =
        {}
      for (const side of round % 2 === 1 ? ['none', 'streams'] : ['streams', 'none']) {
        process.stderr.write(
          `bench: ${STREAMS.label}, workers ${workers}, round ${round} of ${options.rounds}: ${side === 'none' ? 'no streams' : `${fmt(count)} streams`}\n`,
        )
        if (side === 'none') {
          measured.none = await measure(service, STREAMS, options, env)
          continue
        }
        const readers = await startReaders(service.url, readToken, token, count)
        try {
          measured.streams = await measure(service, STREAMS, options, env, undefined, readers.beside)
          Object.assign(measured, readers.reading())
        } finally {
          await readers.stop()
        }
      }
      const { none, streams, reading, cpuPercent } = measured as Required<typeof measured>
      const { latencyMs, ...rest } = reading
      rounds.push({
        none,
        streams,
        ratio: streams.rps / none.rps,
        readers: { ...rest, latency: latencyOf(latencyMs), cpuPercent },
        intact: intact(none, streams, reading),
      })
      samples.push(...latencyMs)
    }
    const latency = latencyOf(samples)
    return {
      workers,
      readers: count,
      rounds,
      ratio: median(rounds.map((r) => r.ratio)),
      ...(latency ? { latency } : {}),
    }
  } finally {
    const code = await service?.stop()
    if (code !== undefined && code !== 0)
      process.stderr.write(`bench: plantstore exited with ${code} on SIGTERM\n`)
    await setup.cleanup()
  }
}

/** The streams results as the report prints them: one line a round. */
export function streamsTable(results: StreamsResult[]): string {
  const lines = [
    '| scenario | workers | round | creates/s, no streams | p99 ms | creates/s, streams open | p99 ms | ÷ no streams | change to reader p50 ms | p99 ms | samples | readers CPU | streams ended, changes missed, read twice | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const result of results) {
    const scenario = `${STREAMS.name}, ${fmt(result.readers)} streams`
    if (result.skipped) {
      lines.push(`| ${scenario} | ${result.workers} | skipped: ${result.skipped} |${' |'.repeat(11)}`)
      continue
    }
    result.rounds.forEach(({ none, streams, ratio, readers }, i) => {
      const errors =
        none.non2xx + none.socketErrors + streams.non2xx + streams.socketErrors + readers.probes.failed
      lines.push(
        `| ${scenario} | ${result.workers} | ${i + 1} | ${fmt(none.rps)} | ${fmt(none.p99Ms, 2)} | ${fmt(streams.rps)} | ${fmt(streams.p99Ms, 2)} | ${fmt(ratio, 2)} | ${readers.latency ? fmt(readers.latency.p50, 2) : '—'} | ${readers.latency ? fmt(readers.latency.p99, 2) : '—'} | ${fmt(readers.latency?.samples ?? 0)} | ${fmt(readers.cpuPercent)}% | ${fmt(readers.ends)}, ${fmt(readers.missing)}, ${fmt(readers.unordered)} | ${fmt(errors)} |`,
      )
    })
  }
  return lines.join('\n')
}
