// `npm run bench`: loads the real service with wrk, scenario by scenario, and in the same rounds the
// servers it is measured against. For creates on an empty store with one worker, with random ids and
// with ascending ones, that is the durable reference (bench/reference.mjs on SQLite,
// bench/reference-pg.mjs with --database-url): the smallest server giving a create the same
// guarantees on the same database, which the service is held to (bench/verdicts.ts). The bare node:http
// ceiling (bench/ceiling.mjs), which stores nothing, is measured beside every scenario for scale.
// Every ratio is taken within a round, between runs moments apart on the same machine, so a noisy,
// shared machine still gives comparable figures. The CLI's start-up is measured first, against
// `node -e 0` in the same run (bench/startup.ts). The find pages are read on a store of their own and
// held to its plain first page (bench/find.ts); batch creates are held to single creates
// (bench/batch.ts); creates with open streams of GET /events/stream to the same creates with none, and
// a change's time to a stream reader to a bound (bench/streams.ts).
// Options: `npm run bench -- --help`; the parts of the run are in the files this one imports.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { type BatchResult, batchTable, measureBatch } from './batch.js'
import { type ResultRow, type Round, type ServerName, settle } from './figures.js'
import { measureFind } from './find.js'
import { fmt } from './format.js'
import { measure, type PerfRecording } from './load.js'
import { type Options, Refusal, readOptions, refuse } from './options.js'
import { BENCH } from './paths.js'
import { perfNodeFlags, perfUnavailable, report, summaryText } from './perf-profile.js'
import { type BenchSchema, emptySchema } from './postgres.js'
import { issueToken, running, type Server, startProcess, startService } from './processes.js'
import { startupTable, table } from './report.js'
import { READ_ROWS } from './scenarios.js'
import { freshDatabase, routeExists } from './setup.js'
import { measureStartup } from './startup.js'
import { measureStreams, type StreamsResult, streamsTable } from './streams.js'
import {
  batchVerdictLines,
  batchVerdicts,
  findVerdictLines,
  findVerdicts,
  startupVerdictLines,
  startupVerdicts,
  streamsVerdictLines,
  streamsVerdicts,
  verdictLines,
  verdicts,
} from './verdicts.js'

/** Where perf's recordings go, and the service's processes that wrote a JIT map for it. */
interface Profiling {
  dir: string
  mapped: Set<number>
}

/**
 * One setup (a fresh database with `rows` plants, the service with `workers`), scenario by scenario:
 * each round loads every server once, in an order that turns by one each round so that none is
 * always measured first. The reference takes the same creates as the service, in the same order,
 * so that both tables have grown alike when each scenario starts.
 */
async function measureSetup(
  rows: number,
  workers: string,
  options: Options,
  profiling: Profiling | undefined,
): Promise<ResultRow[]> {
  const setup = await freshDatabase(options.databaseUrl)
  const referenceDir = mkdtempSync(join(tmpdir(), 'plantstore-reference-'))
  const servers: Partial<Record<ServerName, Server>> = {}
  let referenceSchema: BenchSchema | undefined
  const results: ResultRow[] = []
  try {
    const token = issueToken(setup.url)
    if (rows > 0) {
      process.stderr.write(`bench: storing ${fmt(rows)} plants…\n`)
      await setup.fill(rows)
    }
    servers.plantstore = await startService(setup.url, workers, profiling ? perfNodeFlags(profiling.dir) : [])
    servers.ceiling = await startProcess(process.execPath, [join(BENCH, 'ceiling.mjs'), '--token', token])
    // Each store is held to the reference of its own design: SQLite's (a file, group commit in one
    // process) or PostgreSQL's (one connection, a turn's creates in one statement), in a schema of
    // its own beside the service's.
    const compared = rows === 0 && workers === '1' && options.scenarios.some((s) => s.creates)
    if (compared && options.databaseUrl !== undefined) {
      referenceSchema = await emptySchema(options.databaseUrl)
      const args = ['--token', token, '--database-url', referenceSchema.url]
      servers.reference = await startProcess(process.execPath, [join(BENCH, 'reference-pg.mjs'), ...args])
    } else if (compared) {
      const database = join(referenceDir, 'reference.db')
      const args = ['--token', token, '--database', database, '--schema', 'service']
      servers.reference = await startProcess(process.execPath, [join(BENCH, 'reference.mjs'), ...args])
    }
    // The find pages are read on a store of their own (bench/find.ts).
    for (const scenario of options.scenarios.filter((s) => !s.find)) {
      const row = { scenario: scenario.name, rows, workers }
      const service = servers.plantstore
      // A build without the route is the same build in every setup.
      if (scenario.probe && !(await routeExists(service.url, scenario.probe, token))) {
        results.push({ ...row, skipped: 'route not in this build', rounds: [], servers: {} })
        continue
      }
      if (!scenario.creates && rows < READ_ROWS) await setup.fill(READ_ROWS)
      const env = { BENCH_TOKEN: token, BENCH_ROWS: String(Math.max(rows, READ_ROWS)) }
      const loaded = (['plantstore', 'reference', 'ceiling'] as const).filter(
        (name) => servers[name] && (name !== 'reference' || scenario.creates),
      )
      const rounds: Round[] = []
      const profiles: NonNullable<ResultRow['profiles']> = []
      for (let round = 1; round <= options.rounds; round++) {
        const turn = (round - 1) % loaded.length
        const measured: Round = {}
        for (const name of [...loaded.slice(turn), ...loaded.slice(0, turn)]) {
          process.stderr.write(
            `bench: ${scenario.label}, ${fmt(rows)} stored, workers ${workers}, round ${round} of ${options.rounds}: ${name}\n`,
          )
          // Only the service is profiled: it is the one whose time is in question.
          const perf: PerfRecording | undefined =
            profiling && name === 'plantstore'
              ? {
                  file: join(profiling.dir, `perf-${scenario.name}-${rows}-w${workers}-r${round}.data`),
                  seen: profiling.mapped,
                }
              : undefined
          const m = await measure(servers[name] as Server, scenario, options, env, perf)
          measured[name] = m
          if (perf) profiles.push({ round, ...(await summarizePerf(perf, m.requests)) })
        }
        rounds.push(measured)
      }
      results.push(settle({ ...row, rounds, ...(profiles.length > 0 ? { profiles } : {}) }))
    }
  } finally {
    for (const [name, server] of Object.entries(servers)) {
      const code = await server.stop()
      if (code !== 0) process.stderr.write(`bench: ${name} exited with ${code} on SIGTERM\n`)
    }
    await setup.cleanup()
    await referenceSchema?.drop()
    rmSync(referenceDir, { recursive: true, force: true })
  }
  return results
}

/** perf's recording of one run, summarized beside it (a .txt of the same name) and in the results. */
async function summarizePerf(perf: PerfRecording, requests: number) {
  const summary = await report(perf.file)
  const file = perf.file.replace(/\.data$/, '.txt')
  writeFileSync(file, summaryText(summary, requests))
  const frames = summary.frames.map((f) => `${f.meaning} ${fmt(f.percent, 1)} %`).join(', ')
  process.stderr.write(`bench: perf profile of the service's event loop: ${file} (${frames})\n`)
  return { file, pids: perf.sampled ?? [], summary }
}

/** Removes what perf's recordings left beside them: V8's logs and the service's JIT maps. */
function tidyProfiling({ dir, mapped }: Profiling): void {
  // V8's logs beside the recordings (isolate-ADDRESS-PID-v8.log) say nothing the recordings do not.
  const ours = (file: string) => [...mapped].some((pid) => file.endsWith(`-${pid}-v8.log`))
  for (const log of readdirSync(dir).filter((f) => f.startsWith('isolate-') && ours(f))) {
    rmSync(join(dir, log), { force: true })
  }
  for (const pid of mapped) rmSync(`/tmp/perf-${pid}.map`, { force: true })
  mapped.clear()
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2))
  const { duration, rounds, warmup, connections, threads, prefills, workerCounts } = options
  const started = new Date()
  process.stderr.write(
    `bench: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ${rounds} round(s) of ${duration}s per server after ${warmup}s warm-up, ${connections} connections, ${threads} wrk thread(s)\n`,
  )
  const out =
    options.out ?? join(BENCH, 'results', `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`)
  let profiling: Profiling | undefined
  if (options.perf) {
    const why = await perfUnavailable()
    if (why !== undefined) refuse(`--perf cannot sample here: ${why}`)
    // Beside the results they belong to.
    profiling = { dir: join(dirname(out), 'profiles'), mapped: new Set() }
    mkdirSync(profiling.dir, { recursive: true })
  }
  // Before any server starts: nothing of the run's own then competes with the commands.
  const startup = options.cliRuns === undefined ? undefined : measureStartup(options.cliRuns)
  const results: ResultRow[] = []
  const batches: BatchResult[] = []
  const streams: StreamsResult[] = []
  const loads = options.scenarios.filter((s) => !s.find)
  const finds = options.scenarios.filter((s) => s.find)
  try {
    // A run of the CLI's start-up alone sets up no database and starts no server.
    for (const workers of options.scenarios.length > 0 || options.batch || options.streams
      ? workerCounts
      : []) {
      if (loads.length > 0) {
        for (const rows of prefills) results.push(...(await measureSetup(rows, workers, options, profiling)))
      }
      // The seeded store is kept beside the results, as the profiles are.
      if (finds.length > 0)
        results.push(...(await measureFind(workers, options, join(dirname(out), 'stores'))))
      if (options.batch) batches.push(await measureBatch(workers, options))
      if (options.streams) streams.push(await measureStreams(workers, options))
    }
  } finally {
    if (profiling) tidyProfiling(profiling)
  }

  mkdirSync(dirname(out), { recursive: true })
  const machine = { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }
  const settings = {
    duration,
    rounds,
    warmup,
    connections,
    threads,
    prefills,
    workers: workerCounts,
    findRows: options.findRows,
    streamReaders: options.streamReaders,
  }
  const judged = [
    ...verdicts(results),
    ...findVerdicts(results),
    ...batchVerdicts(batches),
    ...streamsVerdicts(streams),
    ...startupVerdicts(startup),
  ]
  writeFileSync(
    out,
    `${JSON.stringify({ started, machine, settings, results, batch: batches, streams, startup, verdicts: judged }, null, 2)}\n`,
  )
  const lines = verdictLines(results)
  const findLines = findVerdictLines(results)
  const batchLines = batchVerdictLines(batches)
  const streamsLines = streamsVerdictLines(streams)
  const sections = [
    results.length > 0 ? table(results) : '',
    lines.length > 0
      ? `creates on one worker against the durable reference (medians of ${rounds} round(s)):\n${lines.join('\n')}`
      : '',
    findLines.length > 0
      ? `find pages against the first page on the same store (medians of ${rounds} round(s)):\n${findLines.join('\n')}`
      : '',
    batches.length > 0 ? batchTable(batches) : '',
    batchLines.length > 0
      ? `batch creates against single creates (median of ${rounds} round(s)):\n${batchLines.join('\n')}`
      : '',
    streams.length > 0 ? streamsTable(streams) : '',
    streamsLines.length > 0
      ? `creates with streams open against none (median of ${rounds} round(s)), and a change's time from its create's response to a stream reader (over every round):\n${streamsLines.join('\n')}`
      : '',
    startup
      ? `CLI start-up against node -e 0 (medians of ${startup.runs} runs of each, taken in turn):\n${startupTable(startup)}\n${startupVerdictLines(startup).join('\n')}`
      : '',
  ]
  process.stdout.write(`${[...sections.filter(Boolean), `results: ${out}`].join('\n\n')}\n`)
}

main().catch((error: unknown) => {
  if (error instanceof Refusal) {
    ;(error.code === 0 ? process.stdout : process.stderr).write(`${error.message}\n`)
    process.exit(error.code)
  }
  for (const child of running) child.kill('SIGTERM')
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
