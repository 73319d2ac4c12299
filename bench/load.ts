// One measured load: wrk against a server after a warm-up, with the server's memory and CPU sampled
// throughout and, asked for, its event loop recorded by perf.
import { execFileSync, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { once } from 'node:events'
import type { Load, Measured } from './figures.js'
import { BENCH, WRK } from './paths.js'
import { recordThreads } from './perf-profile.js'
import { cpuSeconds, processTree, rssKb, type Server } from './processes.js'
import type { Scenario } from './scenarios.js'

/** How every server is loaded in a run: wrk's threads and connections, and how long. */
export interface LoadShape {
  /** Seconds measured. */
  duration: number
  /** Seconds of load before, not measured. */
  warmup: number
  connections: number
  threads: number
}

/** Runs wrk under bash so that `times` reports wrk's CPU use once it has exited. */
async function runWrk(
  url: string,
  script: string,
  seconds: number,
  { threads, connections }: LoadShape,
  env: Record<string, string>,
): Promise<Load> {
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url]
  const child = spawn('bash', ['-c', `"${WRK}" "$@"; rc=$?; times >&2; exit $rc`, 'bash', ...args], {
    cwd: BENCH,
    // A seed of its own for every run: a warm-up and the measured run after it that started from the
    // same seed would send the same ids again, and every repeat would get a 409.
    env: { ...process.env, BENCH_DIR: BENCH, ...env, BENCH_SEED: String(randomInt(1, 2 ** 31)) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c
  })
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c
  })
  const [code] = await once(child, 'close')
  const line = /BENCH_RESULT (\{.*\})/.exec(stdout)
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${stdout}${stderr}`)
  const result = JSON.parse(line[1] as string)
  const nonOk = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)
  // `times` prints the shell's own line, then its children's: "0m1.234s 0m0.567s".
  const timesLines = stderr.trim().split('\n').slice(-2)
  const [user, sys] = (timesLines[1] ?? '').split(' ').map((t) => {
    const m = /(\d+)m([\d.]+)s/.exec(t)
    return m ? Number(m[1]) * 60 + Number(m[2]) : 0
  })
  const wall = result.durationUs / 1e6
  const e = result.errors
  return {
    requests: result.requests,
    rps: result.requests / wall,
    p50Ms: result.latencyUs.p50 / 1000,
    p99Ms: result.latencyUs.p99 / 1000,
    non2xx: nonOk ? Number(nonOk[1]) : 0,
    socketErrors: e.connect + e.read + e.write + e.timeout,
    wrkCpuPercent: (100 * ((user ?? 0) + (sys ?? 0))) / wall,
  }
}

/** A perf recording of one measured load, and the service's processes it met. */
export interface PerfRecording {
  file: string
  /**
   * Every process of the service seen from before the warm-up to the end of the load, a worker started
   * in place of one that exited included: each writes a JIT map (/tmp/perf-PID.map), removed once the
   * service stops.
   */
  seen: Set<number>
  /** The processes whose event loops were sampled, set when the recording starts. */
  sampled?: number[]
}

/** What runs beside the measured load (bench/streams.ts: the stream readers' counting and probes). */
export interface Beside {
  /** Called right before the measured load, after the warm-up. */
  start(): void
  /** Called once the measured load has ended and the server's figures are read. */
  stop(): Promise<void>
}

/**
 * Warm up (JIT, caches), then measure, sampling the server's memory and CPU throughout; with perf,
 * perf samples the event loop of each of its processes into perf.file for as long as the load lasts.
 */
export async function measure(
  server: Server,
  scenario: Scenario,
  shape: LoadShape,
  env: Record<string, string>,
  perf?: PerfRecording,
  beside?: Beside,
): Promise<Measured> {
  const { duration, warmup } = shape
  // Whatever earlier runs left for the disk to write is written first, so that one server's fsyncs do
  // not wait behind the writes of the server measured before it.
  execFileSync('sync')
  const root = server.process.pid as number
  // A worker replaced during the warm-up leaves a map too.
  if (perf) for (const pid of processTree(root)) perf.seen.add(pid)
  if (warmup > 0) await runWrk(server.url, scenario.script, warmup, shape, env)
  let pids = processTree(root)
  const cpuBefore = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  let peakKb = 0
  const sample = () => {
    pids = processTree(root)
    for (const pid of pids) perf?.seen.add(pid)
    peakKb = Math.max(
      peakKb,
      pids.reduce((sum, pid) => sum + rssKb(pid), 0),
    )
  }
  sample()
  const sampler = setInterval(sample, 100)
  beside?.start()
  const started = process.hrtime.bigint()
  const startedAt = new Date().toISOString()
  try {
    // A process's main thread, its event loop, has the process's own id.
    if (perf) perf.sampled = pids
    const recording = perf && recordThreads(pids, duration, perf.file)
    // Read as soon as the load ends: perf takes a second more to write its file, idle time that
    // would lower every CPU share.
    const measured = runWrk(server.url, scenario.script, duration, shape, env).then((load): Measured => {
      sample()
      const cpuAfter = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
      const wall = Number(process.hrtime.bigint() - started) / 1e9
      return {
        ...load,
        peakRssMb: peakKb / 1024,
        serverCpuPercent: (100 * (cpuAfter - cpuBefore)) / wall,
        startedAt,
      }
    })
    const result = (await Promise.all([measured, recording]))[0]
    await beside?.stop()
    return result
  } finally {
    clearInterval(sampler)
  }
}
