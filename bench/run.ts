// `npm run bench`: loads the real service and, in the same run, the bare node:http ceiling
// (bench/ceiling.mjs) with wrk, scenario by scenario, and prints how close the service comes. For
// creates on an empty store it also loads bench/reference.mjs, the ceiling plus durable SQLite group
// commit and nothing else, on one bare table and on the service's own tables (--schema service),
// which shows what the storage design alone reaches on the machine, and the service with a store that
// keeps nothing (bench/no-store.mjs), which shows what the service's own work alone reaches.
// Every figure that matters is a ratio measured minutes apart on the same machine, so a noisy,
// shared machine still gives comparable numbers; on SQLite every setup (--workers × --prefill) runs at
// once and the rounds take them in turn, so that setups compared with each other are measured side by
// side too. Options: `npm run bench -- --help`.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { parseDatabaseUrl } from '../src/store/open.js'
import {
  busiestThreadSeconds,
  type CpuBudget,
  cpuBudget,
  cpuPerRequestUs,
  statCpuSeconds,
  threadCpuSeconds,
} from './cpu-budget.js'
import { median } from './median.js'
import {
  type PerfSummary,
  perfNodeFlags,
  perfUnavailable,
  recordThreads,
  report,
  summaryText,
} from './perf-profile.js'
import { benchSchema } from './postgres.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const BENCH = join(ROOT, 'bench')
const BIN = join(ROOT, 'bin', 'plantstore')
const WRK = process.env.WRK ?? 'wrk'

/** The environment and node flags of the launcher's `#!/usr/bin/env -S VAR=… node --flag…` line. */
const LAUNCHER = (() => {
  const words = (readFileSync(BIN, 'utf8').split('\n')[0] ?? '').replace(/^#!\S+ -S /, '').split(/\s+/)
  const at = words.indexOf('node')
  const env = Object.fromEntries(words.slice(0, at).map((w) => w.split('=', 2) as [string, string]))
  return { env, nodeFlags: words.slice(at + 1).filter(Boolean) }
})()

interface Scenario {
  name: string
  label: string
  script: string
  /** Loads POST /plants: measured beside the references on an empty store. */
  creates?: boolean
  /** For a route that not every build has: run only when a GET of this path answers 2xx. */
  probe?: string
}
const SCENARIOS: Scenario[] = [
  // The one the targets judge: random 63-bit ids, each landing on a leaf of its own.
  { name: 'create', label: 'POST /plants', script: 'create.lua', creates: true },
  // For scale: the same creates with ascending ids, which append to the tables' last leaves.
  {
    name: 'create-ascending',
    label: 'POST /plants, ascending ids',
    script: 'create-ascending.lua',
    creates: true,
  },
  { name: 'get', label: 'GET /plants/{id}', script: 'get.lua' },
  { name: 'list', label: 'GET /plants?limit=100', script: 'list.lua', probe: '/plants?limit=100' },
  {
    name: 'list-after',
    label: 'GET /plants?limit=100&after={id}',
    script: 'list-after.lua',
    probe: '/plants?limit=100&after=1',
  },
  // Last, so that the reads before it find the plants as they were stored.
  { name: 'update', label: 'PATCH /plants/{id}', script: 'update.lua' },
]

const HELP = `usage: npm run bench -- [options]

  --duration <s>        seconds measured per round, scenario and server (default 10)
  --rounds <n>          rounds per scenario, each measuring every setup's service in turn, each
                        run between two runs of the ceiling; the ratios reported are the medians
                        of the rounds' (default 3)
  --warmup <s>          seconds of unmeasured load before each measurement (default 2)
  --connections <n>     wrk connections (default 50)
  --threads <n>         wrk threads (default 1)
  --database-url <url>  postgres://… to bench PostgreSQL: each setup gets a schema of its own in
                        that database (plantstore_bench_PID_N, dropped at the end; the user needs
                        CREATE on the database); default a fresh SQLite file per setup
  --prefill <list>      plants stored before the run, e.g. 0,1000000 (default 0)
  --workers <list>      serve --workers values, e.g. 1,2 (default 1)
  --scenarios <list>    create,create-ascending,get,list,list-after,update (default all);
                        create sends random ids, create-ascending ids that ascend
  --cpu-prof            write a V8 CPU profile of the service (bench/results/profiles/)
  --perf                sample the service's event loop with Linux perf during each measured run
                        and summarize where its time went (bench/results/profiles/perf-*.txt)
  --out <file>          JSON results (default bench/results/bench-<time>.json)`

/** Refuses the run before anything starts: a benchmark that fails halfway has cost its setup for nothing. */
function refuse(message: string): never {
  process.stderr.write(`bench: ${message}\n`)
  process.exit(2)
}

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        duration: { type: 'string', default: '10' },
        rounds: { type: 'string', default: '3' },
        warmup: { type: 'string', default: '2' },
        connections: { type: 'string', default: '50' },
        threads: { type: 'string', default: '1' },
        'database-url': { type: 'string' },
        prefill: { type: 'string', default: '0' },
        workers: { type: 'string', default: '1' },
        scenarios: { type: 'string', default: SCENARIOS.map((s) => s.name).join(',') },
        'cpu-prof': { type: 'boolean', default: false },
        perf: { type: 'boolean', default: false },
        out: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    })
  } catch (error) {
    // An unknown option or one without its value: one line and usage, not a stack trace.
    return refuse(`${(error as Error).message}\n${HELP}`)
  }
})()
const opts = parsed.values
if (opts.help) {
  process.stdout.write(`${HELP}\n`)
  process.exit(0)
}

/** A comma-separated option: an empty one would make a run that measured nothing. */
const list = (raw: string, name: string): string[] => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  return items.length > 0 ? items : refuse(`--${name} needs at least one value`)
}
const whole = (raw: string, name: string, least: number): number => {
  const n = Number(raw)
  return Number.isInteger(n) && n >= least
    ? n
    : refuse(`--${name} must be a whole number of at least ${least}, not ${JSON.stringify(raw)}`)
}
// wrk refuses a zero duration, no threads, and fewer connections than threads.
const duration = whole(opts.duration, 'duration', 1)
const roundCount = whole(opts.rounds, 'rounds', 1)
const warmup = whole(opts.warmup, 'warmup', 0)
const threads = whole(opts.threads, 'threads', 1)
const connections = whole(opts.connections, 'connections', threads)
const prefills = list(opts.prefill, 'prefill').map((p) => whole(p, 'prefill', 0))
const workerCounts = list(opts.workers, 'workers')
const scenarioNames = list(opts.scenarios, 'scenarios')
const given = opts['database-url']
const location = given === undefined ? undefined : parseDatabaseUrl(given)
if (given !== undefined && location?.kind !== 'postgres') {
  // A SQLite database is made fresh for each setup: one given would be left unused without a word.
  refuse('--database-url takes a postgres:// URL; without it each setup gets a fresh SQLite file')
}
const databaseUrl = location?.kind === 'postgres' ? location.url : undefined

const unknownScenarios = scenarioNames.filter((name) => !SCENARIOS.some((s) => s.name === name))
if (unknownScenarios.length > 0) {
  // Skipped quietly, a misspelt scenario would make a run that measured less than it was asked to.
  refuse(
    `unknown scenario ${unknownScenarios.join(', ')}: the scenarios are ${SCENARIOS.map((s) => s.name).join(', ')}`,
  )
}
const scenarios = SCENARIOS.filter((s) => scenarioNames.includes(s.name))
// The other scenarios read or change random ones among the N plants stored first (storedIdStride), so
// at least this many exist when they run.
const READ_ROWS = 10_000

interface Load {
  requests: number
  rps: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  socketErrors: number
  wrkCpuPercent: number
}

interface Measured extends Load {
  peakRssMb: number
  serverCpuPercent: number
  /** The CPU share of the server's busiest thread alone (its event loop, as a rule): at most 100. */
  busiestThreadCpuPercent: number
  /** When the measured load began (after the warm-up): one run's, not a combination's. */
  startedAt?: string
}

/**
 * One round of a scenario for one setup: after a ceiling run, (for creates on an empty store) the
 * references, then the service, then the ceiling again, whose run also opens the next setup's turn.
 */
interface Round {
  /** The mean of the ceiling runs just before and just after this round's servers (see bracket). */
  ceiling: Measured
  /** The reference servers' runs, by name (see REFERENCES). */
  references?: Record<string, Measured>
  service: Measured
}

/** A reference server over the rounds: its figures combined, and its medians of the rounds' ratios. */
interface ReferenceRow {
  name: string
  measured: Measured
  ratio: number
  p99VsCeiling: number
}

interface ResultRow {
  scenario: string
  rows: number
  workers: string
  /** Each server's figures over the rounds: medians, but the peak RSS is the highest. */
  ceiling: Measured | null
  service: Measured | null
  /** The REFERENCES, measured for creates on an empty store with one worker. */
  references?: ReferenceRow[]
  skipped?: string
  /** The median of the rounds' service req/s ÷ that round's ceiling req/s. */
  ratio?: number
  /** The median of the rounds' service p99 ÷ that round's ceiling p99. */
  p99VsCeiling?: number
  rounds?: Round[]
  /**
   * The ceiling's runs next to this row's rounds, in order: the one just before and the one just
   * after each round (with one setup, one before each round and one after the last).
   */
  ceilingRuns?: Measured[]
  /** For creates with one worker: the CPU a create may use at the target rate, and what each server used. */
  cpu?: CpuFigures
  /** With --perf: where the service's event loop spent each round's measured run. */
  profiles?: Array<{ round: number; file: string; pids: number[]; summary: PerfSummary }>
}

/** CPU per request in µs: all of a server's threads together, and its busiest thread alone. */
interface CpuUse {
  server: string
  allThreadsUs: number
  busiestThreadUs: number
}

interface CpuFigures {
  budget: CpuBudget
  used: CpuUse[]
}

/** One server's rounds as one row: counts summed, the peak RSS the highest, the rest medians. */
function combine(rounds: Measured[]): Measured {
  const mid = (pick: (m: Measured) => number) => median(rounds.map(pick))
  const sum = (pick: (m: Measured) => number) => rounds.reduce((total, m) => total + pick(m), 0)
  return {
    requests: sum((m) => m.requests),
    rps: mid((m) => m.rps),
    p50Ms: mid((m) => m.p50Ms),
    p99Ms: mid((m) => m.p99Ms),
    non2xx: sum((m) => m.non2xx),
    socketErrors: sum((m) => m.socketErrors),
    wrkCpuPercent: mid((m) => m.wrkCpuPercent),
    peakRssMb: Math.max(...rounds.map((m) => m.peakRssMb)),
    serverCpuPercent: mid((m) => m.serverCpuPercent),
    busiestThreadCpuPercent: mid((m) => m.busiestThreadCpuPercent),
  }
}

/**
 * The ceiling as it stood around a measurement: its runs just before and just after, combined (the
 * median of two figures is their mean). On a shared machine the capacity left to the servers drifts
 * within minutes (one round's ceiling answered 6,688 req/s and the next 19,838); a ratio to a run on
 * one side only takes that drift in whole, one to both sides' mean takes only its curvature.
 */
const bracket = (before: Measured, after: Measured): Measured => combine([before, after])

/**
 * A server's rounds, each beside the ceiling measured in the same round: its combined figures, and the
 * medians of its per-round req/s and p99 ratios to that ceiling.
 */
function againstCeiling(rounds: Array<{ ceiling: Measured; measured: Measured }>): {
  combined: Measured
  ratio: number
  p99Ratio: number
} {
  return {
    combined: combine(rounds.map((r) => r.measured)),
    ratio: median(rounds.map((r) => r.measured.rps / r.ceiling.rps)),
    p99Ratio: median(rounds.map((r) => r.measured.p99Ms / r.ceiling.p99Ms)),
  }
}

// --- processes --------------------------------------------------------------------------------

// Stopped if the run is interrupted, so that no server outlives the benchmark.
const running = new Set<ChildProcess>()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGTERM')
    process.exit(130)
  })
}

interface Server {
  url: string
  process: ChildProcess
  stop(): Promise<number | null>
}

async function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${output}`)), 30_000)
    const check = () => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1] as string)
      }
    }
    child.stdout?.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited with ${code}:\n${output}`))
    })
  })
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** The process and its children (cluster workers), whose memory and CPU count as the server's. */
function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
    return [pid, ...(children ? children.split(/\s+/).map(Number).flatMap(processTree) : [])]
  } catch {
    return [pid]
  }
}

function rssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return 0
  }
}

// --- load -------------------------------------------------------------------------------------

/** Runs wrk under bash so that `times` reports wrk's CPU use once it has exited. */
async function runWrk(
  url: string,
  script: string,
  seconds: number,
  env: Record<string, string>,
): Promise<Load> {
  const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, url]
  const child = spawn('bash', ['-c', `"${WRK}" "$@"; rc=$?; times >&2; exit $rc`, 'bash', ...args], {
    cwd: BENCH,
    // A seed of its own for every run: a warm-up and the measured run after it that started from the
    // same seed would send the same ids again, and every repeat would be answered 409.
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
interface PerfRecording {
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

/**
 * Warm up (JIT, caches), then measure, sampling the server's memory and CPU throughout; with perf,
 * perf samples the event loop of each of its processes into perf.file for as long as the load lasts.
 */
async function measure(
  server: Server,
  scenario: Scenario,
  env: Record<string, string>,
  perf?: PerfRecording,
): Promise<Measured> {
  // Whatever earlier runs left for the disk to write is written first. Right after a reference's run
  // (its log and database deleted with its folder) the service's creates were 7–9 % fewer, most
  // likely its fsyncs waiting behind what the disk still had to write of that run.
  execFileSync('sync')
  const root = server.process.pid as number
  // A worker replaced during the warm-up leaves a map too.
  if (perf) for (const pid of processTree(root)) perf.seen.add(pid)
  if (warmup > 0) await runWrk(server.url, scenario.script, warmup, env)
  let pids = processTree(root)
  const cpuBefore = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
  const threadsBefore = threadCpuSeconds(pids)
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
  const started = process.hrtime.bigint()
  const startedAt = new Date().toISOString()
  try {
    // A process's main thread, its event loop, has the process's own id.
    if (perf) perf.sampled = pids
    const recording = perf && recordThreads(pids, duration, perf.file)
    // Read as soon as the load ends: perf takes a second more to write its file, idle time that
    // would lower every CPU share.
    const measured = runWrk(server.url, scenario.script, duration, env).then((load): Measured => {
      sample()
      const cpuAfter = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0)
      const threadsAfter = threadCpuSeconds(pids)
      const wall = Number(process.hrtime.bigint() - started) / 1e9
      return {
        ...load,
        peakRssMb: peakKb / 1024,
        serverCpuPercent: (100 * (cpuAfter - cpuBefore)) / wall,
        busiestThreadCpuPercent: (100 * busiestThreadSeconds(threadsBefore, threadsAfter)) / wall,
        startedAt,
      }
    })
    return (await Promise.all([measured, recording]))[0]
  } finally {
    clearInterval(sampler)
  }
}

/**
 * A reference server of the benchmark: bench/reference.mjs with its arguments, or the service itself
 * with a module loaded before it (`node --import`).
 */
type Reference = {
  name: string
  /** What the `for scale` line under the verdicts calls it. */
  scale: string
} & (
  | {
      args: string[]
      /** Its database is made by the service's own migrations first. */
      migrated?: boolean
    }
  | {
      /** The module imported first; the service migrates its database as it opens it. */
      service: string
    }
)

/** The references measured for creates on an empty store with one worker, in this order. */
const REFERENCES: Reference[] = [
  { name: 'reference', scale: 'durable group commit alone (bench/reference.mjs)', args: [] },
  {
    name: 'reference (service schema)',
    scale: "the same, writing the service's rows and indexes (bench/reference.mjs --schema service)",
    args: ['--schema', 'service'],
    migrated: true,
  },
  {
    name: 'plantstore (no storage)',
    scale: "the service answering each turn's creates together, storing none (bench/no-store.mjs)",
    service: join(BENCH, 'no-store.mjs'),
  },
]

/** A token for the load, issued with the CLI as an operator would. */
function issueToken(databaseUrl: string): string {
  return execFileSync(BIN, ['token', 'create', '--name', 'bench', '--database-url', databaseUrl], {
    encoding: 'utf8',
  }).trim()
}

/**
 * `plantstore serve` on its own port, the one token never limited. Started through the launcher, as
 * `npm start` does, so its V8 and malloc settings apply; with node flags (Node refuses --cpu-prof and
 * --perf-basic-prof in NODE_OPTIONS) it starts node itself with the launcher's settings and them.
 */
function startService(databaseUrl: string, workers: string, nodeFlags: string[] = []): Promise<Server> {
  // One token sends everything here: the per-token limit would answer most requests 429.
  const serve = [
    'serve',
    '--port',
    '0',
    '--database-url',
    databaseUrl,
    '--workers',
    workers,
    '--rate-limit',
    'off',
  ]
  return nodeFlags.length === 0
    ? startProcess(BIN, serve)
    : startProcess(process.execPath, [...LAUNCHER.nodeFlags, ...nodeFlags, BIN, ...serve], LAUNCHER.env)
}

/** A reference on a fresh SQLite file of its own, started and stopped around its load. */
async function measureReference(
  spec: Reference,
  scenario: Scenario,
  env: Record<string, string>,
  token: string,
): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-reference-'))
  const database = join(dir, 'reference.db')
  let reference: Server
  let own = token
  if ('service' in spec) {
    // The service checks tokens against its own database, so it gets a token of its own.
    own = issueToken(`sqlite:${database}`)
    reference = await startService(`sqlite:${database}`, '1', ['--import', spec.service])
  } else {
    if (spec.migrated) {
      execFileSync(BIN, ['migrate', '--database-url', `sqlite:${database}`], { stdio: 'ignore' })
    }
    reference = await startProcess(process.execPath, [
      join(BENCH, 'reference.mjs'),
      '--token',
      token,
      '--database',
      database,
      ...spec.args,
    ])
  }
  try {
    return await measure(reference, scenario, { ...env, BENCH_TOKEN: own })
  } finally {
    await reference.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

// --- database set-up --------------------------------------------------------------------------

/**
 * The stored plants' ids: the x-th of n (x from 1) has id x × ⌊(2^63 − 1) ÷ n⌋. They spread evenly
 * over the positive int64 range, as random ids do, so the creates' random ids land among them, in
 * the leaves they fill, rather than all past them; common.lua makes the same ids for the scripts
 * that read or change stored plants.
 */
const storedIdStride = (n: number): bigint => (2n ** 63n - 1n) / BigInt(n)

interface Setup {
  url: string
  /** Stores n plants (those not there yet), the way a large store would hold them (storedIdStride). */
  fill(n: number): Promise<void>
  cleanup(): Promise<void>
}

async function freshDatabase(): Promise<Setup> {
  if (databaseUrl !== undefined) {
    const { url, client, drop } = await benchSchema(databaseUrl)
    return {
      url,
      // In a random order, as on SQLite (below): a B-tree grown in id order packs its leaves.
      fill: async (n) => {
        await client.query(
          `INSERT INTO plants (id, name, tag, created_at, updated_at)
           SELECT x * $2::bigint, 'plant ' || x, CASE WHEN x % 2 = 0 THEN 'bench' END, now(), now()
           FROM generate_series(1, $1::bigint) AS x ORDER BY random() ON CONFLICT (id) DO NOTHING`,
          [n, storedIdStride(n).toString()],
        )
      },
      cleanup: drop,
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-'))
  const file = join(dir, 'bench.db')
  const url = `sqlite:${file}`
  execFileSync(BIN, ['migrate', '--database-url', url], { stdio: 'ignore' })
  return {
    url,
    fill: async (n) => {
      const db = new Database(file)
      db.pragma('busy_timeout = 10000')
      // The tables' pages stay in memory while the rows go in out of order (a million in seconds).
      db.pragma('cache_size = -524288')
      const now = Date.now()
      // One statement, one transaction, the rows in a random order: stored in id order they filled the
      // plants' leaves to 99 % (dbstat, a million plants), so that nearly every leaf split at its first
      // create; stored at random they fill them to 90 %, as a store grown by random creates is.
      db.prepare(
        `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
         INSERT OR IGNORE INTO plants (id, name, tag, created_at, updated_at)
         SELECT x * ?, 'plant ' || x, CASE WHEN x % 2 = 0 THEN 'bench' END, ?, ? FROM n ORDER BY random()`,
      ).run(n, storedIdStride(n), now, now)
      db.close()
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** Whether the route exists on this build: a route that does not answers 404 or 405. */
async function routeExists(url: string, path: string, token: string): Promise<boolean> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.ok
}

// --- report -----------------------------------------------------------------------------------

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits })

function table(rows: ResultRow[]): string {
  const header = [
    'scenario',
    'stored',
    'workers',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'req/s ÷ ceiling',
    'p99 ÷ ceiling',
    'wrk CPU',
    'server CPU',
    'errors',
  ]
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`]
  for (const row of rows) {
    const scenario = SCENARIOS.find((s) => s.name === row.scenario)?.label ?? row.scenario
    if (row.skipped) {
      lines.push(
        `| ${scenario} | ${fmt(row.rows)} | ${row.workers} | skipped: ${row.skipped} |${' |'.repeat(9)}`,
      )
      continue
    }
    for (const [name, m, ratio, p99] of [
      ['ceiling', row.ceiling, 1, 1] as const,
      ...(row.references ?? []).map((r) => [r.name, r.measured, r.ratio, r.p99VsCeiling] as const),
      ['plantstore', row.service, row.ratio, row.p99VsCeiling] as const,
    ]) {
      if (!m || ratio === undefined || p99 === undefined) continue
      const workers = name === 'plantstore' ? row.workers : '1'
      lines.push(
        `| ${scenario} | ${fmt(row.rows)} | ${workers} | ${name} | ${fmt(m.rps)} | ${fmt(m.p50Ms, 2)} | ${fmt(m.p99Ms, 2)} | ${fmt(m.peakRssMb)} | ${fmt(ratio, 2)} | ${fmt(p99, 2)} | ${fmt(m.wrkCpuPercent)}% | ${fmt(m.serverCpuPercent)}% | ${fmt(m.non2xx + m.socketErrors)} |`,
      )
    }
  }
  return lines.join('\n')
}

/**
 * What a create may cost in CPU at CREATE_RATIO of the ceiling's rate on this machine's cores, less
 * what wrk spent per request on the ceiling (the nearest rate to the target's), beside what each
 * server of the row spent per request.
 */
function cpuFigures(row: ResultRow): CpuFigures | undefined {
  const ceiling = row.ceiling
  if (!ceiling || !row.service || !scenarioOf(row).creates || row.workers !== '1') return undefined
  const use = (server: string, m: Measured): CpuUse => ({
    server,
    allThreadsUs: cpuPerRequestUs(m.serverCpuPercent, m.rps),
    busiestThreadUs: cpuPerRequestUs(m.busiestThreadCpuPercent, m.rps),
  })
  return {
    budget: cpuBudget(
      CREATE_RATIO * ceiling.rps,
      cpus().length,
      cpuPerRequestUs(ceiling.wrkCpuPercent, ceiling.rps),
    ),
    used: [
      use('ceiling', ceiling),
      ...(row.references ?? []).map((r) => use(r.name, r.measured)),
      use('plantstore', row.service),
    ],
  }
}

function scenarioOf(row: ResultRow): Scenario {
  return SCENARIOS.find((s) => s.name === row.scenario) as Scenario
}

/** How many plants were stored, and for creates other than the judged ones, which they were. */
function whereMeasured(row: ResultRow): string {
  const stored = `${fmt(row.rows)} stored`
  return row.scenario === 'create' ? stored : `${scenarioOf(row).label}, ${stored}`
}

function cpuLine(row: ResultRow, cpu: CpuFigures): string {
  const { budget } = cpu
  const used = cpu.used
    .map((u) => `${u.server} ${fmt(u.allThreadsUs, 1)} / ${fmt(u.busiestThreadUs, 1)}`)
    .join(', ')
  return (
    `for scale  CPU a create may use at ${CREATE_RATIO} × ceiling (${fmt(budget.rate)}/s on ${budget.cores} cores, ` +
    `wrk taking ${fmt(budget.wrkUs, 1)} µs a request), ${whereMeasured(row)}: ${fmt(budget.allThreadsUs, 1)} µs in all ` +
    `threads, ${fmt(budget.oneThreadUs, 1)} µs in any one; used, all threads / busiest thread, µs: ${used}`
  )
}

// --- targets ----------------------------------------------------------------------------------

/** One performance target of the project, judged on this run's figures. */
interface Verdict {
  target: string
  measured: string
  met: boolean
}

const CREATE_RATIO = 0.8
const P99_FACTOR = 2
const RSS_MB = 120
const FLAT_TOLERANCE = 0.1
const LIST_ROWS = 1_000_000

/**
 * How the creates' ratio to the ceiling changed from the empty store to the fullest: the median of the
 * rounds' changes, each round's ratio with the plants stored against the same round's on the empty
 * store, which on SQLite were measured one beside the other (measureTogether).
 */
function flatChange(empty: ResultRow, fullest: ResultRow): number {
  const ratios = (row: ResultRow) => (row.rounds ?? []).map((r) => r.service.rps / r.ceiling.rps)
  const [before, after] = [ratios(empty), ratios(fullest)]
  return median(after.map((ratio, i) => ratio / (before[i] as number))) - 1
}

/** The targets the project holds itself to, each judged from the rows this run measured. */
function verdicts(rows: ResultRow[]): Verdict[] {
  const measured = rows.filter((r) => r.service && r.ceiling && r.workers === '1')
  const out: Verdict[] = []
  const creates = measured.filter((r) => r.scenario === 'create')
  for (const row of creates) {
    const at = `${fmt(row.rows)} stored`
    out.push({
      target: `POST /plants req/s ≥ ${CREATE_RATIO} × ceiling (${at})`,
      measured: fmt(row.ratio ?? 0, 2),
      met: (row.ratio ?? 0) >= CREATE_RATIO,
    })
    out.push({
      target: `POST /plants p99 ≤ ${P99_FACTOR} × ceiling's (${at})`,
      measured: `${fmt(row.p99VsCeiling ?? 0, 2)}×`,
      met: (row.p99VsCeiling ?? Number.POSITIVE_INFINITY) <= P99_FACTOR,
    })
    out.push({
      target: `POST /plants peak RSS ≤ ${RSS_MB} MB (${at})`,
      measured: `${fmt(row.service?.peakRssMb ?? 0)} MB`,
      met: (row.service?.peakRssMb ?? Number.POSITIVE_INFINITY) <= RSS_MB,
    })
  }
  const empty = creates.find((r) => r.rows === 0)
  const fullest = creates.reduce<ResultRow | undefined>(
    (a, r) => (r.rows > (a?.rows ?? 0) ? r : a),
    undefined,
  )
  if (empty?.ratio && fullest?.ratio) {
    const change = flatChange(empty, fullest)
    out.push({
      target: `POST /plants flat within ±${FLAT_TOLERANCE * 100} % from 0 to ${fmt(fullest.rows)} stored (ratio to ceiling)`,
      measured: `${change >= 0 ? '+' : ''}${fmt(change * 100, 1)} %`,
      met: Math.abs(change) <= FLAT_TOLERANCE,
    })
  }
  for (const row of measured.filter((r) => r.scenario === 'list' && r.rows >= LIST_ROWS)) {
    out.push({
      target: `GET /plants?limit=100 p99 ≤ ${P99_FACTOR} × ceiling's (${fmt(row.rows)} stored)`,
      measured: `${fmt(row.p99VsCeiling ?? 0, 2)}×`,
      met: (row.p99VsCeiling ?? Number.POSITIVE_INFINITY) <= P99_FACTOR,
    })
  }
  return out
}

// --- run --------------------------------------------------------------------------------------

/** One setup of the run: its own fresh database, token and service. */
interface Live {
  rows: number
  workers: string
  setup: Setup
  token: string
  service?: Server
  /** Its rows so far, one per scenario. */
  tallies: Tally[]
}

/** One setup's row for one scenario, with its rounds and the ceiling runs it is judged against. */
interface Tally {
  row: ResultRow
  env: Record<string, string>
  rounds: Round[]
  ceilingRuns: Measured[]
}

/**
 * Measures these setups (each a fresh database, its plants stored, its own service) beside one
 * ceiling: scenario by scenario, each round loads every setup's service in turn, each run followed
 * by a ceiling run, so that every service run sits between two ceiling runs and the setups' runs of a
 * round lie minutes apart at most. The order of the setups turns by one each round. Returns the rows
 * setup by setup, each in the scenarios' order.
 */
async function measureTogether(
  group: Array<{ workers: string; rows: number }>,
  profileDir: string,
  mapped: Set<number>,
): Promise<ResultRow[]> {
  // Each entry is kept as soon as its database exists, so that a failure later still removes it.
  const live: Live[] = []
  let ceiling: Server | undefined
  try {
    for (const { workers, rows } of group) {
      const setup = await freshDatabase()
      const entry: Live = { workers, rows, setup, token: '', tallies: [] }
      live.push(entry)
      entry.token = issueToken(setup.url)
      if (rows > 0) {
        process.stderr.write(`bench: storing ${fmt(rows)} plants…\n`)
        await setup.fill(rows)
      }
    }
    const first = live[0] as Live
    ceiling = await startProcess(process.execPath, [join(BENCH, 'ceiling.mjs'), '--token', first.token])
    for (const entry of live) {
      entry.service = await startService(entry.setup.url, entry.workers, [
        ...(opts['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
        ...(opts.perf ? perfNodeFlags(profileDir) : []),
      ])
    }
    for (const scenario of scenarios) {
      // A build without the route is the same build in every setup.
      if (scenario.probe && !(await routeExists(first.service?.url ?? '', scenario.probe, first.token))) {
        for (const entry of live) {
          const row = { ...emptyRow(scenario, entry), skipped: 'route not in this build' }
          entry.tallies.push({ row, env: {}, rounds: [], ceilingRuns: [] })
        }
        process.stderr.write(`bench: ${scenario.label} skipped (the route does not exist)\n`)
        continue
      }
      const these: Array<[Live, Tally]> = []
      for (const entry of live) {
        if (!scenario.creates && entry.rows < READ_ROWS) await entry.setup.fill(READ_ROWS)
        const env = { BENCH_TOKEN: entry.token, BENCH_ROWS: String(Math.max(entry.rows, READ_ROWS)) }
        const tally: Tally = { row: emptyRow(scenario, entry), env, rounds: [], ceilingRuns: [] }
        entry.tallies.push(tally)
        these.push([entry, tally])
      }
      // The ceiling stores nothing: the first setup's token and ids serve it throughout.
      const ceilingEnv = (these[0] as [Live, Tally])[1].env
      let previous = await measure(ceiling, scenario, ceilingEnv)
      for (let round = 1; round <= roundCount; round++) {
        const turn = (round - 1) % these.length
        for (const [entry, tally] of [...these.slice(turn), ...these.slice(0, turn)]) {
          process.stderr.write(
            `bench: ${scenario.label}, ${fmt(entry.rows)} stored, workers ${entry.workers}, round ${round} of ${roundCount}\n`,
          )
          const references: Record<string, Measured> = {}
          if (scenario.creates && entry.rows === 0 && entry.workers === '1') {
            for (const spec of REFERENCES) {
              references[spec.name] = await measureReference(spec, scenario, tally.env, entry.token)
            }
          }
          const perf: PerfRecording | undefined = opts.perf
            ? {
                file: join(
                  profileDir,
                  `perf-${scenario.name}-${entry.rows}-w${entry.workers}-r${round}.data`,
                ),
                seen: mapped,
              }
            : undefined
          const measuredService = await measure(entry.service as Server, scenario, tally.env, perf)
          if (perf) {
            const pids = perf.sampled ?? []
            const summary = await report(perf.file)
            const text = perf.file.replace(/\.data$/, '.txt')
            writeFileSync(text, summaryText(summary, measuredService.requests))
            tally.row.profiles = [...(tally.row.profiles ?? []), { round, file: text, pids, summary }]
            const frames = summary.frames.map((f) => `${f.meaning} ${fmt(f.percent, 1)} %`).join(', ')
            process.stderr.write(`bench: perf profile of the service's event loop: ${text} (${frames})\n`)
          }
          const after = await measure(ceiling, scenario, ceilingEnv)
          tally.rounds.push({
            ceiling: bracket(previous, after),
            service: measuredService,
            ...(Object.keys(references).length > 0 ? { references } : {}),
          })
          if (tally.ceilingRuns.at(-1) !== previous) tally.ceilingRuns.push(previous)
          tally.ceilingRuns.push(after)
          previous = after
        }
      }
      for (const [, tally] of these) settle(tally)
    }
  } finally {
    for (const entry of live) {
      const code = await entry.service?.stop()
      if (entry.service && code !== 0)
        process.stderr.write(`bench: the service exited with ${code} on SIGTERM\n`)
    }
    await ceiling?.stop()
    for (const entry of live) await entry.setup.cleanup()
    // V8's logs beside the recordings (isolate-ADDRESS-PID-v8.log) say nothing the recordings do not.
    const ours = (file: string) => [...mapped].some((pid) => file.endsWith(`-${pid}-v8.log`))
    const logs =
      mapped.size > 0 ? readdirSync(profileDir).filter((f) => f.startsWith('isolate-') && ours(f)) : []
    for (const log of logs) rmSync(join(profileDir, log), { force: true })
    for (const pid of mapped) rmSync(`/tmp/perf-${pid}.map`, { force: true })
    mapped.clear()
  }
  return live.flatMap((entry) => entry.tallies.map((tally) => tally.row))
}

/** A setup's row for a scenario, before anything is measured. */
function emptyRow(scenario: Scenario, { rows, workers }: Live): ResultRow {
  return { scenario: scenario.name, rows, workers, ceiling: null, service: null }
}

/** A row's figures from its rounds: the medians, and its ratios to the ceiling runs around each. */
function settle({ row, rounds, ceilingRuns }: Tally): void {
  row.rounds = rounds
  row.ceilingRuns = ceilingRuns
  row.ceiling = combine(ceilingRuns)
  const served = againstCeiling(rounds.map((r) => ({ ceiling: r.ceiling, measured: r.service })))
  row.service = served.combined
  row.ratio = served.ratio
  row.p99VsCeiling = served.p99Ratio
  if (rounds.some((r) => r.references)) {
    row.references = REFERENCES.map(({ name }) => {
      const against = againstCeiling(
        rounds.map((r) => ({ ceiling: r.ceiling, measured: r.references?.[name] as Measured })),
      )
      return { name, measured: against.combined, ratio: against.ratio, p99VsCeiling: against.p99Ratio }
    })
  }
}

async function main(): Promise<void> {
  const results: ResultRow[] = []
  const started = new Date()
  process.stderr.write(
    `bench: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ${roundCount} round(s) of ${duration}s per server after ${warmup}s warm-up, ${connections} connections, ${threads} wrk thread(s)\n`,
  )
  const profileDir = join(BENCH, 'results', 'profiles')
  if (opts.perf) {
    const why = await perfUnavailable()
    if (why !== undefined) refuse(`--perf cannot sample here: ${why}`)
    mkdirSync(profileDir, { recursive: true })
  }
  // The service's processes that wrote a JIT map for perf (/tmp/perf-PID.map), removed once it stops.
  const mapped = new Set<number>()
  const setups = workerCounts.flatMap((workers) => prefills.map((rows) => ({ workers, rows })))
  // Every setup has a database of its own (a file, or a schema of the PostgreSQL database given), so
  // all of them run at once and are measured in turn, round by round: the flat verdict and the
  // workers' gain compare setups measured minutes apart, which one setup after another put at the
  // mercy of the machine's drift.
  results.push(...(await measureTogether(setups, profileDir, mapped)))

  const out = opts.out ?? join(BENCH, 'results', `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`)
  mkdirSync(join(out, '..'), { recursive: true })
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }
  const settings = {
    duration,
    rounds: roundCount,
    warmup,
    connections,
    threads,
    prefills,
    workers: workerCounts,
  }
  const targets = verdicts(results)
  for (const row of results) {
    const cpu = cpuFigures(row)
    if (cpu) row.cpu = cpu
  }
  writeFileSync(out, `${JSON.stringify({ started, machine, settings, results, targets }, null, 2)}\n`)
  const judged = targets.map((v) => `${v.met ? 'met    ' : 'NOT met'}  ${v.target}: ${v.measured}`)
  for (const row of results) {
    for (const reference of row.references ?? []) {
      const scale = REFERENCES.find((r) => r.name === reference.name)?.scale
      judged.push(`for scale  ${scale}, ${whereMeasured(row)}: ${fmt(reference.ratio, 2)} × ceiling`)
    }
    // Under the one-worker verdicts, as the references and the CPU line are.
    if (
      row.workers === '1' &&
      row.scenario !== 'create' &&
      row.ratio !== undefined &&
      scenarioOf(row).creates
    ) {
      judged.push(`for scale  plantstore, ${whereMeasured(row)}: ${fmt(row.ratio, 2)} × ceiling`)
    }
    if (row.cpu) judged.push(cpuLine(row, row.cpu))
  }
  process.stdout.write(
    `${table(results)}\n\n${judged.length > 0 ? `targets (workers 1):\n${judged.join('\n')}\n\n` : ''}results: ${out}\n`,
  )
}

main().catch((error: unknown) => {
  for (const child of running) child.kill('SIGTERM')
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
