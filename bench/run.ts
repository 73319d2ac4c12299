// `npm run bench`: loads the real service and, in the same run, the bare node:http ceiling
// (bench/ceiling.mjs) with wrk, scenario by scenario, and prints how close the service comes. For
// creates on an empty store it also loads bench/reference.mjs, the ceiling plus durable SQLite group
// commit and nothing else, on one bare table and on the service's own tables (--schema service),
// which shows what the storage design alone reaches on the machine, and the service with a store that
// keeps nothing (bench/no-store.mjs), which shows what the service's own work alone reaches.
// Every figure that matters is a ratio measured minutes apart on the same machine, so a noisy,
// shared machine still gives comparable numbers; every setup (--workers × --prefill) runs at once and
// the rounds take them in turn, so that setups compared with each other are measured side by side too.
// Options: `npm run bench -- --help`; the parts of the run are in the files this one imports.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { dirname, join } from 'node:path'
import { againstCeiling, bracket, combine, type Measured, type ResultRow, type Round } from './figures.js'
import { fmt } from './format.js'
import { measure, type PerfRecording } from './load.js'
import { type Options, readOptions, refuse } from './options.js'
import { BENCH } from './paths.js'
import { perfNodeFlags, perfUnavailable, report, summaryText } from './perf-profile.js'
import { issueToken, running, type Server, startProcess, startService } from './processes.js'
import { measureReference, REFERENCES } from './references.js'
import { cpuFigures, cpuLine, scenarioOf, table, whereMeasured } from './report.js'
import { READ_ROWS, type Scenario } from './scenarios.js'
import { freshDatabase, routeExists, type Setup } from './setup.js'
import { verdicts } from './targets.js'

const options = readOptions(process.argv.slice(2))

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
  options: Options,
  profileDir: string,
  mapped: Set<number>,
): Promise<ResultRow[]> {
  // Each entry is kept as soon as its database exists, so that a failure later still removes it.
  const live: Live[] = []
  let ceiling: Server | undefined
  try {
    for (const { workers, rows } of group) {
      const setup = await freshDatabase(options.databaseUrl)
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
        ...(options.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
        ...(options.perf ? perfNodeFlags(profileDir) : []),
      ])
    }
    for (const scenario of options.scenarios) {
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
      let previous = await measure(ceiling, scenario, options, ceilingEnv)
      for (let round = 1; round <= options.rounds; round++) {
        const turn = (round - 1) % these.length
        for (const [entry, tally] of [...these.slice(turn), ...these.slice(0, turn)]) {
          process.stderr.write(
            `bench: ${scenario.label}, ${fmt(entry.rows)} stored, workers ${entry.workers}, round ${round} of ${options.rounds}\n`,
          )
          const references: Record<string, Measured> = {}
          if (scenario.creates && entry.rows === 0 && entry.workers === '1') {
            for (const spec of REFERENCES) {
              references[spec.name] = await measureReference(spec, scenario, options, tally.env, entry.token)
            }
          }
          const perf: PerfRecording | undefined = options.perf
            ? {
                file: join(
                  profileDir,
                  `perf-${scenario.name}-${entry.rows}-w${entry.workers}-r${round}.data`,
                ),
                seen: mapped,
              }
            : undefined
          const measuredService = await measure(entry.service as Server, scenario, options, tally.env, perf)
          if (perf) {
            const pids = perf.sampled ?? []
            const summary = await report(perf.file)
            const text = perf.file.replace(/\.data$/, '.txt')
            writeFileSync(text, summaryText(summary, measuredService.requests))
            tally.row.profiles = [...(tally.row.profiles ?? []), { round, file: text, pids, summary }]
            const frames = summary.frames.map((f) => `${f.meaning} ${fmt(f.percent, 1)} %`).join(', ')
            process.stderr.write(`bench: perf profile of the service's event loop: ${text} (${frames})\n`)
          }
          const after = await measure(ceiling, scenario, options, ceilingEnv)
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
  const { duration, rounds, warmup, connections, threads, prefills, workerCounts } = options
  const results: ResultRow[] = []
  const started = new Date()
  process.stderr.write(
    `bench: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ${rounds} round(s) of ${duration}s per server after ${warmup}s warm-up, ${connections} connections, ${threads} wrk thread(s)\n`,
  )
  const out =
    options.out ?? join(BENCH, 'results', `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`)
  // Beside the results they belong to: a run with --out elsewhere (the tests' runs) leaves what an
  // earlier run profiled in bench/results/profiles as it was.
  const profileDir = join(dirname(out), 'profiles')
  if (options.perf) {
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
  results.push(...(await measureTogether(setups, options, profileDir, mapped)))

  mkdirSync(join(out, '..'), { recursive: true })
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }
  const settings = {
    duration,
    rounds,
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
