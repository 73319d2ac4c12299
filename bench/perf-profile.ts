// `npm run bench -- --perf`: where a server's event loop spends its time, sampled by Linux perf.
// V8's own profiler (--cpu-prof) slows the service too much to say where a measured run's time
// went; perf samples a thread a thousand times a second from the kernel, and node's
// --perf-basic-prof names the JIT-compiled JavaScript in its samples. Only the main thread (the
// event loop, whose thread id is the process id) of each process is sampled: it sets the rate.
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { promisify } from 'node:util'

const run = promisify(execFile)
const PERF = process.env.PERF ?? 'perf'
/** Samples a second per thread: about one a millisecond, a cost within a run's noise. */
const FREQUENCY = 999

/** The node flags that make V8 write /tmp/perf-PID.map, perf's names for JIT code, with its log in dir. */
export function perfNodeFlags(dir: string): string[] {
  // Writing the map also turns on V8's log, a file per isolate in the working directory unless told.
  return ['--perf-basic-prof', `--logfile=${dir}/v8.log`]
}

/** Why perf cannot sample here (not installed, or the kernel refuses), or undefined when it can. */
export async function perfUnavailable(): Promise<string | undefined> {
  try {
    await run(PERF, ['record', '-q', '-F', String(FREQUENCY), '-o', '/dev/null', '--', 'true'])
    return undefined
  } catch (error) {
    const { code, stderr } = error as { code?: string | number; stderr?: string }
    if (code === 'ENOENT') return `${PERF} is not installed (Debian: apt-get install linux-perf)`
    return `${PERF} record failed: ${(stderr || String(error)).trim().split('\n')[0]}`
  }
}

/** Samples these threads, with their call chains, into file for the given seconds; resolves when done. */
export function recordThreads(threadIds: number[], seconds: number, file: string): Promise<void> {
  const child = spawn(
    PERF,
    [
      'record',
      '-q',
      '-F',
      String(FREQUENCY),
      '-g',
      '-t',
      threadIds.join(','),
      '-o',
      file,
      '--',
      'sleep',
      String(seconds),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c
  })
  return once(child, 'close').then(([code]) => {
    if (code !== 0) throw new Error(`perf record exited with ${code}: ${stderr.trim()}`)
  })
}

/** Frames whose inclusive shares say what SQLite's work, and the young generation's collections, cost. */
const FRAMES: ReadonlyArray<{ frame: string; meaning: string }> = [
  { frame: 'sqlite3_step', meaning: 'SQLite statements' },
  { frame: 'pagerWalFrames', meaning: "the commit's log frames" },
  { frame: 'readDbPage', meaning: 'page reads' },
  { frame: 'v8::internal::Heap::Scavenge', meaning: 'young-generation garbage collection' },
]

export interface Share {
  name: string
  percent: number
}

export interface PerfSummary {
  /** CPU time sampled in the threads, seconds (perf's event count of cpu-clock, in ns). */
  cpuSeconds: number
  /** Self time by where the code lies: node's binary, the kernel, JIT code, SQLite, libc… */
  byObject: Share[]
  /** The functions with the most self time, each named with where it lies. */
  top: Share[]
  /** Inclusive shares of FRAMES (0 for one never sampled). */
  frames: Array<Share & { meaning: string }>
}

/** Rows `   12.34%  name…` (self time) or `   12.34%   1.23%  [.] name` (inclusive, then self). */
function shares(report: string): Array<{ percent: number; rest: string }> {
  const rows: Array<{ percent: number; rest: string }> = []
  for (const line of report.split('\n')) {
    const match = /^\s+([\d.]+)%\s+(?:[\d.]+%\s+)?(\S.*?)\s*$/.exec(line)
    if (match) rows.push({ percent: Number(match[1]), rest: match[2] as string })
  }
  return rows
}

/** Reads perf's reports of a recording, top entries only. */
export function summarize(
  reports: { byObject: string; bySymbol: string; inclusive: string },
  count = 15,
): PerfSummary {
  const eventCount = /# Event count \(approx\.\): (\d+)/.exec(reports.byObject)
  // JIT code lies in "[JIT] tid 1234": one name for every run's, whatever its thread.
  const object = (name: string) => name.replace(/^\[JIT\] tid \d+$/, '[JIT]')
  const inclusive = new Map<string, number>()
  for (const { percent, rest } of shares(reports.inclusive)) {
    const name = rest.replace(/^\[[.k]\]\s+/, '')
    if (!inclusive.has(name)) inclusive.set(name, percent)
  }
  return {
    cpuSeconds: eventCount ? Number(eventCount[1]) / 1e9 : 0,
    byObject: shares(reports.byObject)
      .slice(0, count)
      .map(({ percent, rest }) => ({ name: object(rest), percent })),
    top: shares(reports.bySymbol)
      .slice(0, count)
      .map(({ percent, rest }) => {
        // "better_sqlite3.node  [.] walChecksumBytes": the function, then where it lies.
        const match = /^(.*?)\s+\[[.k]\]\s+(.*)$/.exec(rest)
        return { name: match ? `${match[2]} (${object(match[1] as string)})` : rest, percent }
      }),
    frames: FRAMES.map(({ frame, meaning }) => ({
      name: frame,
      meaning,
      percent: inclusive.get(frame) ?? 0,
    })),
  }
}

/** Runs perf report on a recording (the JIT map files it names must still exist) and summarizes it. */
export async function report(file: string): Promise<PerfSummary> {
  const perfReport = async (...args: string[]) =>
    (
      await run(PERF, ['report', '-i', file, '--stdio', '-g', 'none', ...args], {
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout
  const byObject = await perfReport('--no-children', '--sort', 'dso')
  const bySymbol = await perfReport('--no-children', '--sort', 'dso,sym')
  const inclusive = await perfReport('--children', '--sort', 'sym')
  return summarize({ byObject, bySymbol, inclusive })
}

const pct = (n: number) => `${n.toFixed(1)} %`

/** µs of the sampled threads' CPU a request spent under a share, over the requests of the same run. */
function perRequestUs(summary: PerfSummary, percent: number, requests: number): number {
  return (summary.cpuSeconds * 1e6 * percent) / 100 / requests
}

/** The summary as text: one block for people, beside the recording. */
export function summaryText(summary: PerfSummary, requests: number): string {
  const perRequest = (percent: number) =>
    `, ${perRequestUs(summary, percent, requests).toFixed(1)} µs a request`
  return [
    `CPU sampled: ${summary.cpuSeconds.toFixed(2)} s over ${requests} requests${perRequest(100)}`,
    '',
    'self time by where the code lies:',
    ...summary.byObject.map((s) => `  ${pct(s.percent).padStart(7)}  ${s.name}`),
    '',
    'functions with the most self time:',
    ...summary.top.map((s) => `  ${pct(s.percent).padStart(7)}  ${s.name}`),
    '',
    'time under these frames (inclusive):',
    ...summary.frames.map(
      (s) => `  ${pct(s.percent).padStart(7)}  ${s.meaning} (${s.name})${perRequest(s.percent)}`,
    ),
    '',
  ].join('\n')
}
