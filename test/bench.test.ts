import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { cpus } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { median } from '../bench/median.js'
import { perfUnavailable } from '../bench/perf-profile.js'
import { admin } from './helpers/postgres.js'
import { lacking } from './helpers/requirement.js'
import { postgresKind, tempDir } from './helpers/stores.js'

const run = promisify(execFile)
// perf runs only where it is installed and the kernel lets it sample (perf_event_open): the check
// `--perf` itself makes before it starts.
const perfSamples = (await perfUnavailable()) === undefined
const ROOT = join(import.meta.dirname, '..')

interface Measured {
  rps: number
  p99Ms: number
  peakRssMb: number
  non2xx: number
  socketErrors: number
  wrkCpuPercent: number
  serverCpuPercent: number
  busiestThreadCpuPercent: number
  startedAt?: string
}
interface Round {
  ceiling: Measured
  references: Record<string, Measured>
  service: Measured
}
interface Row {
  scenario: string
  rows: number
  workers: string
  ratio: number
  p99VsCeiling: number
  references: Array<{ name: string; measured: Measured; ratio: number; p99VsCeiling: number }>
  ceiling: Measured
  service: Measured
  rounds: Round[]
  ceilingRuns: Measured[]
  cpu: {
    budget: { rate: number; cores: number; wrkUs: number; allThreadsUs: number; oneThreadUs: number }
    used: Array<{ server: string; allThreadsUs: number; busiestThreadUs: number }>
  }
}

interface Report {
  results: Row[]
  targets: Array<{ target: string; measured: string; met: boolean }>
}

interface Profile {
  round: number
  file: string
  pids: number[]
  summary: {
    cpuSeconds: number
    byObject: Array<{ name: string; percent: number }>
    top: Array<{ name: string; percent: number }>
    frames: Array<{ name: string; meaning: string; percent: number }>
  }
}

// The benchmark with wrk for real, kept light (two connections, one-second rounds) so that it does
// not crowd the other test files running beside it.
describe('npm run bench', () => {
  it('takes the middle of an odd count and the mean of the two middles of an even one', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([5])).toBe(5)
  })

  it('measures the reference and the service in rounds between ceiling runs and reports the medians', async () => {
    const out = join(tempDir(), 'bench.json')
    const { stdout } = await run(
      'npx',
      [
        'tsx',
        'bench/run.ts',
        '--duration',
        '1',
        '--warmup',
        '1',
        '--rounds',
        '3',
        '--connections',
        '2',
        '--scenarios',
        'create',
        '--out',
        out,
      ],
      { cwd: ROOT, timeout: 120_000 },
    )
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      settings: { rounds: number }
      results: Row[]
      targets: Array<{ target: string; met: boolean }>
    }
    expect(report.settings.rounds).toBe(3)
    const [row] = report.results
    expect(row?.scenario).toBe('create')
    const rounds = (row as Row).rounds
    expect(rounds).toHaveLength(3)
    // The ceiling runs before every round and once after the last, and each round is judged
    // against the mean of the two runs around it.
    const runs = (row as Row).ceilingRuns
    expect(runs).toHaveLength(4)
    rounds.forEach((round, i) => {
      const [before, after] = [runs[i] as Measured, runs[i + 1] as Measured]
      expect(round.ceiling.rps).toBeCloseTo((before.rps + after.rps) / 2, 10)
      expect(round.ceiling.p99Ms).toBeCloseTo((before.p99Ms + after.p99Ms) / 2, 10)
    })
    // Every wrk run has ids of its own: a warm-up and its round share none (a repeat is a 409).
    for (const m of [...runs, ...rounds.flatMap((x) => [...Object.values(x.references), x.service])]) {
      expect(m.rps).toBeGreaterThan(0)
      expect(m.non2xx + m.socketErrors).toBe(0)
    }
    const r = row as Row
    expect(r.ceiling.rps).toBe(median(runs.map((x) => x.rps)))
    expect(r.ratio).toBeCloseTo(median(rounds.map((x) => x.service.rps / x.ceiling.rps)), 10)
    expect(r.p99VsCeiling).toBeCloseTo(median(rounds.map((x) => x.service.p99Ms / x.ceiling.p99Ms)), 10)
    expect(r.references.map((x) => x.name)).toEqual([
      'reference',
      'reference (service schema)',
      'reference (service schema, not durable)',
      'plantstore (no storage)',
    ])
    for (const reference of r.references) {
      const runsOf = rounds.map((x) => x.references[reference.name] as Measured)
      expect(reference.ratio).toBeCloseTo(
        median(rounds.map((x, i) => (runsOf[i] as Measured).rps / x.ceiling.rps)),
        10,
      )
      expect(reference.measured.rps).toBe(median(runsOf.map((x) => x.rps)))
    }
    expect(r.service.rps).toBe(median(rounds.map((x) => x.service.rps)))
    expect(r.service.peakRssMb).toBe(Math.max(...rounds.map((x) => x.service.peakRssMb)))
    expect(report.targets.map((t) => t.target)).toContain('POST /plants req/s ≥ 0.8 × ceiling (0 stored)')
    expect(stdout).toMatch(/\| POST \/plants \| 0 \| 1 \| plantstore \|/)
    expect(stdout).toContain('× ceiling')
    // The CPU a create may use at the target rate, from the ceiling's rate and wrk's use on it.
    const { budget, used } = r.cpu
    expect(budget.cores).toBe(cpus().length)
    expect(budget.rate).toBeCloseTo(0.8 * r.ceiling.rps, 6)
    expect(budget.oneThreadUs).toBeCloseTo(1e6 / budget.rate, 6)
    expect(budget.wrkUs).toBeCloseTo((r.ceiling.wrkCpuPercent / 100 / r.ceiling.rps) * 1e6, 6)
    expect(budget.allThreadsUs).toBeCloseTo(budget.cores * budget.oneThreadUs - budget.wrkUs, 6)
    expect(used.map((u) => u.server)).toEqual([
      'ceiling',
      'reference',
      'reference (service schema)',
      'reference (service schema, not durable)',
      'plantstore (no storage)',
      'plantstore',
    ])
    const service = used.at(-1) as { allThreadsUs: number; busiestThreadUs: number }
    expect(service.allThreadsUs).toBeCloseTo((r.service.serverCpuPercent / 100 / r.service.rps) * 1e6, 6)
    for (const u of used) {
      // A server that answered did work, and no thread uses more than all of them together (the
      // process and its threads are read a moment apart, in ticks of 10 ms: a little slack).
      expect(u.busiestThreadUs).toBeGreaterThan(0)
      expect(u.busiestThreadUs).toBeLessThanOrEqual(u.allThreadsUs * 1.1)
    }
    expect(stdout).toMatch(
      /^for scale {2}CPU a create may use at 0\.8 × ceiling \(.* µs in any one; used, all threads \/ busiest thread, µs: ceiling [0-9.,]+ \/ [0-9.,]+, .*plantstore [0-9.,]+ \/ [0-9.,]+$/m,
    )
  }, 150_000)

  it.each([
    ['list-after.lua', 'the page after', /^\/plants\?limit=100&after=([0-9]+)$/],
    ['get.lua', 'the plant of', /^\/plants\/([0-9]+)$/],
  ])('asks %s for %s a random stored id, a different one nearly every time', async (script, _what, shape) => {
    const paths: string[] = []
    const tokens = new Set<string | undefined>()
    const server = createServer((req, res) => {
      paths.push(req.url ?? '')
      tokens.add(req.headers.authorization)
      res.end('[]')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    try {
      await run('wrk', ['-t1', '-c2', '-d1s', '-s', `bench/${script}`, `http://127.0.0.1:${port}`], {
        cwd: ROOT,
        env: { ...process.env, BENCH_DIR: 'bench', BENCH_ROWS: '1000', BENCH_TOKEN: 't', BENCH_SEED: '7' },
      })
    } finally {
      server.close()
    }
    expect(paths.length).toBeGreaterThan(100)
    expect([...tokens]).toEqual(['Bearer t'])
    // The stored plants' ids: the x-th of 1,000 is x × ⌊(2^63 − 1) ÷ 1,000⌋.
    const stride = (2n ** 63n - 1n) / 1000n
    const places = paths.map((path) => {
      const match = shape.exec(path)
      expect(match, path).not.toBeNull()
      const id = BigInt(match?.[1] ?? -1)
      expect(id % stride, path).toBe(0n)
      return Number(id / stride)
    })
    expect(Math.min(...places)).toBeGreaterThanOrEqual(1)
    expect(Math.max(...places)).toBeLessThanOrEqual(1000)
    // Spread over the int64 range, as random ids are: the largest beyond 2^62.
    expect(Math.max(...places) * Number(stride)).toBeGreaterThan(2 ** 62)
    // Random among 1,000 ids: hundreds of distinct ones, where list.lua asks for one page.
    expect(new Set(places).size).toBeGreaterThan(500)
  })

  /**
   * Runs a wrk script with two threads (one connection each) for a second against a server that
   * answers 200 to everything, and returns what each connection asked for, in order: the path of a
   * GET, the body of a POST.
   */
  async function streamsOf(script: string, seed: string): Promise<string[][]> {
    const streams = new Map<Socket, string[]>()
    const server = createServer((req, res) => {
      const stream = streams.get(req.socket) ?? []
      streams.set(req.socket, stream)
      let body = ''
      req.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      req.on('end', () => {
        stream.push(req.method === 'GET' ? (req.url ?? '') : body)
        res.end('[]')
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    try {
      await run('wrk', ['-t2', '-c2', '-d1s', '-s', `bench/${script}`, `http://127.0.0.1:${port}`], {
        cwd: ROOT,
        env: { ...process.env, BENCH_DIR: 'bench', BENCH_ROWS: '1000', BENCH_TOKEN: 't', BENCH_SEED: seed },
      })
    } finally {
      server.close()
    }
    return [...streams.values()].filter((stream) => stream.length > 0)
  }

  it.each(['get.lua', 'list-after.lua'])(
    'gives each wrk thread of %s its own random ids',
    async (script) => {
      const streams = await streamsOf(script, '7')
      expect(streams).toHaveLength(2)
      // wrk asks a thread's script for one request before its connections start, so two threads
      // seeded alike send the same ids one place apart: compared by the runs of three ids they send,
      // which two random streams among 1,000 ids hardly ever share.
      const triples = (stream: string[]) =>
        new Set(stream.slice(0, 2000).map((path, i) => `${path} ${stream[i + 1]} ${stream[i + 2]}`))
      const [a, b] = streams.map(triples) as [Set<string>, Set<string>]
      expect(Math.min(a.size, b.size)).toBeGreaterThan(100)
      expect([...a].filter((triple) => b.has(triple)).length).toBeLessThan(10)
    },
    30_000,
  )

  it('gives each wrk thread of create.lua ids no other thread sends, the same for the same seed', async () => {
    const ids = (streams: string[][]) =>
      streams.map((stream) =>
        stream.map((body) =>
          BigInt((JSON.parse(body.replace(/"id":(\d+)/, '"id":"$1"')) as { id: string }).id),
        ),
      )
    const [first, again] = [await streamsOf('create.lua', '7'), await streamsOf('create.lua', '7')]
    expect(first).toHaveLength(2)
    const all = ids(first).flat()
    expect(all.length).toBeGreaterThan(200)
    expect(new Set(all).size).toBe(all.length)
    for (const id of all) {
      expect(id).toBeGreaterThan(0n)
      expect(id).toBeLessThan(2n ** 63n)
    }
    // Each thread's ids follow from the seed and the thread alone: a run with the same seed sends
    // them again (which connection a thread holds is not known, so each stream is matched to the
    // first run's that shares most of its first 1,000 ids).
    const firstIds = ids(first).map((stream) => new Set(stream.slice(0, 1000)))
    for (const stream of ids(again)) {
      const head = stream.slice(0, 1000)
      const shared = Math.max(...firstIds.map((earlier) => head.filter((id) => earlier.has(id)).length))
      expect(shared).toBeGreaterThan(990)
    }
  }, 30_000)

  it('gives each wrk thread of create-ascending.lua ascending ids a double holds exactly, apart from the other thread', async () => {
    const streams = (await streamsOf('create-ascending.lua', '7')).map((stream) =>
      stream.map((body) => BigInt((/"id":(\d+)/.exec(body) as RegExpExecArray)[1] as string)),
    )
    expect(streams).toHaveLength(2)
    for (const ids of streams) {
      expect(ids.length).toBeGreaterThan(100)
      ids.forEach((id, i) => {
        if (i > 0) expect(id - (ids[i - 1] as bigint)).toBe(2048n)
        // What JSON.parse makes of it (the references parse ids so) is the id itself.
        expect(BigInt(Number(id))).toBe(id)
        expect(id).toBeGreaterThanOrEqual(2n ** 62n)
        expect(id).toBeLessThan(2n ** 63n)
      })
    }
    const [a, b] = streams as [bigint[], bigint[]]
    const spans = [a, b].map((ids) => [ids[0] as bigint, ids.at(-1) as bigint] as const)
    const [[aFirst, aLast], [bFirst, bLast]] = spans as [[bigint, bigint], [bigint, bigint]]
    expect(aLast < bFirst || bLast < aFirst).toBe(true)
  }, 30_000)

  it('measures creates with ascending ids beside the references, and says where the service stands', async () => {
    const { report, stdout } = await shortRunWithOutput('--scenarios', 'create-ascending', '--workers', '1,2')
    expect(report.results.map((r) => [r.scenario, r.workers])).toEqual([
      ['create-ascending', '1'],
      ['create-ascending', '2'],
    ])
    const [row] = report.results as [Row]
    expect(row.references.map((x) => x.name)).toEqual([
      'reference',
      'reference (service schema)',
      'reference (service schema, not durable)',
      'plantstore (no storage)',
    ])
    // A repeated id is a 409: ids a reference rounded onto each other would show here.
    for (const m of [
      ...row.ceilingRuns,
      ...row.rounds.flatMap((x) => [...Object.values(x.references), x.service]),
    ]) {
      expect(m.rps).toBeGreaterThan(0)
      expect(m.non2xx + m.socketErrors).toBe(0)
    }
    expect(row.cpu.used.map((u) => u.server)).toContain('plantstore')
    expect(stdout).toMatch(/\| POST \/plants, ascending ids \| 0 \| 1 \| plantstore \|/)
    // One line, the one worker's: the lines under the verdicts are all of one worker.
    expect(stdout.match(/for scale {2}plantstore, /g)).toHaveLength(1)
    expect(stdout).toContain(
      `for scale  plantstore, POST /plants, ascending ids, 0 stored: ${row.ratio.toLocaleString('en-US', { maximumFractionDigits: 2 })} × ceiling`,
    )
    // Only the random ids' creates are judged against the targets.
    expect(stdout).not.toContain('NOT met  POST /plants req/s ≥ 0.8 × ceiling (POST /plants, ascending ids')
  }, 150_000)

  it.skipIf(lacking(perfSamples, 'Linux perf (Debian: linux-perf) cannot sample here'))(
    "with --perf says where the service's event loop spent a measured run, and leaves no map behind",
    async () => {
      const { report, dir } = await shortRunWithOutput('--scenarios', 'create', '--perf')
      const [row] = report.results as [Row & { profiles: Profile[] }]
      expect(row.profiles.map((p) => p.round)).toEqual([1])
      const [profile] = row.profiles as [Profile]
      const { summary } = profile
      // perf's cpu-clock is the thread's CPU time: at most the run's second, and some of it.
      expect(summary.cpuSeconds).toBeGreaterThan(0.01)
      expect(summary.cpuSeconds).toBeLessThan(2)
      expect(summary.byObject.map((o) => o.name)).toContain('node')
      const total = summary.byObject.reduce((sum, o) => sum + o.percent, 0)
      expect(total).toBeGreaterThan(90)
      expect(total).toBeLessThanOrEqual(100.5)
      expect(summary.top.length).toBeGreaterThan(5)
      // The creates' inserts and commits run on the event loop: SQLite's statements are sampled there.
      const step = summary.frames.find((f) => f.name === 'sqlite3_step')
      expect(step?.percent).toBeGreaterThan(0)
      const text = readFileSync(profile.file, 'utf8')
      expect(text).toMatch(/^CPU sampled: [\d.]+ s over \d+ requests, [\d.]+ µs a request$/m)
      expect(text).toContain(`SQLite statements (sqlite3_step)`)
      // The JIT maps perf read are removed with the service, and V8's logs beside the recordings.
      expect(profile.pids.length).toBeGreaterThan(0)
      for (const pid of profile.pids) expect(existsSync(`/tmp/perf-${pid}.map`)).toBe(false)
      // Beside the results (--out), not in bench/results, where a run of one's own keeps its own.
      const profiles = join(dir, 'profiles')
      expect(dirname(profile.file)).toBe(profiles)
      expect(
        readdirSync(profiles).filter((f) => profile.pids.some((pid) => f.includes(`-${pid}-v8.log`))),
      ).toEqual([])
    },
    150_000,
  )

  /** A short run of the benchmark (one round of 1 s, two connections) with these options; its report. */
  async function shortRun(...args: string[]): Promise<{ results: Row[] }> {
    return (await shortRunWithOutput(...args)).report
  }

  /** A short run of the benchmark with these options: its report and what it printed. */
  async function shortRunWithOutput(
    ...args: string[]
  ): Promise<{ report: Report; stdout: string; dir: string }> {
    const dir = tempDir()
    const out = join(dir, 'bench.json')
    const { stdout } = await run(
      'npx',
      [
        'tsx',
        'bench/run.ts',
        ...['--duration', '1', '--warmup', '1', '--rounds', '1', '--connections', '2', '--out', out],
        ...args,
      ],
      { cwd: ROOT, timeout: 120_000 },
    )
    return { report: JSON.parse(readFileSync(out, 'utf8')) as Report, stdout, dir }
  }

  it('measures the setups in turn, round by round, and judges flat on the rounds measured side by side', async () => {
    const { report, stdout } = await shortRunWithOutput(
      '--scenarios',
      'create',
      '--prefill',
      '0,500',
      '--rounds',
      '2',
    )
    const [empty, stored] = report.results as [Row, Row]
    expect(report.results.map((r) => [r.scenario, r.rows])).toEqual([
      ['create', 0],
      ['create', 500],
    ])
    const at = (row: Row, round: number) => Date.parse(row.rounds[round]?.service.startedAt ?? '')
    // Both setups' first rounds before either's second, and the order turned: the stored plants first.
    expect(at(empty, 0)).toBeLessThan(at(stored, 0))
    expect(at(stored, 0)).toBeLessThan(at(stored, 1))
    expect(at(stored, 1)).toBeLessThan(at(empty, 1))
    // One ceiling between them: the run after the empty store's first round is the one before the other's.
    expect(stored.ceilingRuns[0]).toEqual(empty.ceilingRuns[1])
    // Each round judged against the ceiling runs just before and just after it.
    for (const row of [empty, stored]) {
      row.rounds.forEach((round, i) => {
        const started = row.ceilingRuns.map((run) => Date.parse(run.startedAt ?? ''))
        const before = row.ceilingRuns[started.findLastIndex((t) => t < at(row, i))] as Measured
        const after = row.ceilingRuns[started.findIndex((t) => t > at(row, i))] as Measured
        expect(round.ceiling.rps).toBeCloseTo((before.rps + after.rps) / 2, 10)
      })
    }
    // The change is each round's ratio with plants stored against the same round's on the empty store.
    const ratio = (row: Row, i: number) =>
      (row.rounds[i] as Round).service.rps / (row.rounds[i] as Round).ceiling.rps
    const changes = [0, 1].map((i) => ratio(stored, i) / ratio(empty, i) - 1)
    const flat = report.targets.find((t) =>
      t.target.startsWith('POST /plants flat within ±10 % from 0 to 500 stored'),
    )
    const signed = (change: number) =>
      `${change >= 0 ? '+' : ''}${(change * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })} %`
    // The median, then each round's change beside it.
    expect(flat?.measured).toBe(`${signed(median(changes))} (rounds: ${changes.map(signed).join(', ')})`)
    expect(stdout).toContain(
      `POST /plants flat within ±10 % from 0 to 500 stored (ratio to ceiling): ${flat?.measured}`,
    )
  }, 150_000)

  it('loads PATCH /plants/{id} on stored plants, each request a change both servers answer 200', async () => {
    const report = await shortRun('--scenarios', 'update')
    expect(report.results.map((r) => r.scenario)).toEqual(['update'])
    const [row] = report.results as [Row]
    for (const m of [...row.ceilingRuns, row.service]) {
      expect(m.rps).toBeGreaterThan(0)
      expect(m.non2xx + m.socketErrors).toBe(0)
    }
  }, 150_000)

  it.skipIf(!postgresKind)(
    'measures PostgreSQL setups side by side, each in a schema of its own, and leaves the tables given alone',
    async () => {
      const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
      await run('./bin/plantstore', ['migrate', '--database-url', url], { cwd: ROOT })
      await admin(url, (c) =>
        c.query("INSERT INTO plants (id, name, created_at, updated_at) VALUES (42, 'kept', now(), now())"),
      )
      const report = await shortRun(
        '--scenarios',
        'create,update',
        '--prefill',
        '0,500',
        '--rounds',
        '2',
        '--database-url',
        url,
      )
      expect(report.results.map((r) => [r.scenario, r.rows])).toEqual([
        ['create', 0],
        ['update', 0],
        ['create', 500],
        ['update', 500],
      ])
      for (const row of report.results) {
        expect(row.service.rps).toBeGreaterThan(0)
        expect(row.service.non2xx + row.service.socketErrors).toBe(0)
      }
      // Both setups' first rounds come before either's second: they ran at once.
      const [empty, stored] = report.results.filter((r) => r.scenario === 'create') as [Row, Row]
      const at = (row: Row, round: number) => Date.parse(row.rounds[round]?.service.startedAt ?? '')
      expect(Math.max(at(empty, 0), at(stored, 0))).toBeLessThan(Math.min(at(empty, 1), at(stored, 1)))
      const left = await admin(url, async (c) => ({
        plants: (await c.query<{ name: string }>('SELECT name FROM public.plants')).rows.map((r) => r.name),
        schemas: (
          await c.query("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, 'plantstore_bench_')")
        ).rowCount,
      }))
      expect(left).toEqual({ plants: ['kept'], schemas: 0 })
    },
    150_000,
  )

  /** A run of the benchmark refused before it starts: its exit code and standard error. */
  const refused = (...args: string[]) =>
    run('npx', ['tsx', 'bench/run.ts', ...args], { cwd: ROOT }).catch(
      (error: { code: number; stderr: string }) => error,
    )

  it('refuses --perf where perf cannot run, with exit 2 before anything starts', async () => {
    const failed = await run('npx', ['tsx', 'bench/run.ts', '--perf', '--scenarios', 'create'], {
      cwd: ROOT,
      env: { ...process.env, PERF: '/nonexistent/perf' },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error)
    expect(failed).toMatchObject({
      code: 2,
      stdout: '',
      stderr: expect.stringContaining(
        'bench: --perf cannot sample here: /nonexistent/perf is not installed (Debian: apt-get install linux-perf)',
      ),
    })
    expect(failed.stderr).not.toContain('round 1')
  })

  it('removes the fresh database when the service fails to start', async () => {
    // A temporary folder of its own, so that only this run's leftovers are counted (tsx keeps its cache there too).
    const tmp = tempDir()
    const failed = await run(
      'npx',
      ['tsx', 'bench/run.ts', '--duration', '1', '--rounds', '1', '--scenarios', 'create', '--workers', '0'],
      { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, timeout: 60_000 },
    ).catch((error: { code: number; stderr: string }) => error)
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('invalid --workers') })
    expect(readdirSync(tmp).filter((name) => name.startsWith('plantstore-'))).toEqual([])
  }, 90_000)

  it.each([
    [['--rounds', '0'], 'bench: --rounds must be a whole number of at least 1, not "0"'],
    // wrk would refuse these only once the servers had started, with a usage text and exit 1.
    [['--duration', '0'], 'bench: --duration must be a whole number of at least 1, not "0"'],
    [['--threads', '0'], 'bench: --threads must be a whole number of at least 1'],
    [['--threads', '4', '--connections', '2'], 'bench: --connections must be a whole number of at least 4'],
    [['--scenarios', ','], 'bench: --scenarios needs at least one value'],
    // Not a stack trace: one line, then the usage.
    [['--connection', '2'], "bench: Unknown option '--connection'"],
    [['--duration'], "bench: Option '--duration <value>' argument missing"],
    // Only PostgreSQL is given: SQLite is made fresh, so a SQLite URL would be left unused.
    [['--database-url', 'sqlite:x.db'], 'bench: --database-url takes a postgres:// URL'],
    // Skipped quietly, it would make a run that measured less than asked.
    [
      ['--scenarios', 'create,read'],
      'bench: unknown scenario read: the scenarios are create, create-ascending, get, list, list-after',
    ],
  ])('refuses %j before it starts, with exit 2', async (args, message) => {
    expect(await refused(...args)).toMatchObject({ code: 2, stderr: expect.stringContaining(message) })
  })
})
