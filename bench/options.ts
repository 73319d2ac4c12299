// `npm run bench`'s options, read and checked before anything starts.
import { parseArgs } from 'node:util'
import { parseDatabaseUrl } from '../src/store/open.js'
import type { LoadShape } from './load.js'
import {
  BATCH,
  CLI_STARTUP,
  FIND_ROWS,
  GROUPS,
  SCENARIOS,
  type Scenario,
  STREAM_READERS,
  STREAMS,
} from './scenarios.js'

const HELP = `usage: npm run bench -- [options]

  --scenarios <list>    create (both id orders), create-random, create-ascending, get, list,
                        list-after, update, find (its four pages), find-plain, find-search,
                        find-tags, find-updated, batch, create-streams, cli (default all).
                        Creates on an empty store with one worker are measured against the
                        durable reference (bench/reference.mjs, or bench/reference-pg.mjs with
                        --database-url) and judged; cli times plantstore --help and token
                        create (on a fresh SQLite file) against node -e 0, and judges them; the
                        find pages are read on a store of --find-rows plants and judged against
                        its plain first page; batch judges POST /plants/batch of 1000 plants
                        against 1000 single creates one after another on one connection;
                        create-streams judges creates on ascending ids with --stream-readers
                        open streams of GET /events/stream against the same creates with none,
                        and the time a change takes from its create's response to a reader
  --stream-readers <n>  streams held open by create-streams, in one process of their own
                        (default 100)
  --find-rows <n>       plants imported for the find pages (default 1000000; on SQLite the
                        seeded file is kept under stores/ beside the results and reused)
  --cli-runs <n>        runs of each command for cli, taken in turn (default 15)
  --duration <s>        seconds measured per round, scenario and server (default 10)
  --rounds <n>          rounds per scenario; each loads every server once, one after the other, in
                        an order that turns each round; the ratios are the medians of the rounds'
                        (default 3)
  --warmup <s>          seconds of unmeasured load before each measurement (default 2)
  --connections <n>     wrk connections (default 50)
  --threads <n>         wrk threads (default 1)
  --database-url <url>  postgres://… to bench PostgreSQL: each setup gets a schema of its own in
                        that database (plantstore_bench_PID_N, dropped at the end; the user needs
                        CREATE on the database); default a fresh SQLite file per setup
  --prefill <list>      plants stored before the run, e.g. 0,1000000 (default 0)
  --workers <list>      serve --workers values, e.g. 1,2 (default 1)
  --perf                sample the service's event loop with Linux perf during each measured run
                        but the find pages' and batch's, and summarize where its time went
                        (profiles/perf-*.txt beside the results)
  --out <file>          JSON results (default bench/results/bench-<time>.json)`

/** A run refused before anything starts: a benchmark that fails halfway has cost its setup for nothing. */
export class Refusal extends Error {
  constructor(
    message: string,
    /** The exit code: 2, or 0 for --help. */
    readonly code = 2,
  ) {
    super(message)
  }
}

export function refuse(message: string): never {
  throw new Refusal(`bench: ${message}`)
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

/** What a run was asked for. */
export interface Options extends LoadShape {
  rounds: number
  prefills: number[]
  workerCounts: string[]
  scenarios: Scenario[]
  /** Runs of each command for the CLI's start-up; undefined when it is not measured. */
  cliRuns: number | undefined
  /** Plants stored for the find pages. */
  findRows: number
  /** Whether batch creates are measured against single ones. */
  batch: boolean
  /** Whether creates with open streams are measured against creates with none. */
  streams: boolean
  /** Streams held open for that. */
  streamReaders: number
  /** PostgreSQL's URL; undefined for SQLite, each setup on a fresh file. */
  databaseUrl: string | undefined
  perf: boolean
  out: string | undefined
}

/** Reads the command line; refuses it (exit 2), or prints the usage (exit 0), before anything starts. */
export function readOptions(args: string[]): Options {
  const parsed = (() => {
    try {
      return parseArgs({
        args,
        options: {
          duration: { type: 'string', default: '10' },
          rounds: { type: 'string', default: '3' },
          warmup: { type: 'string', default: '2' },
          connections: { type: 'string', default: '50' },
          threads: { type: 'string', default: '1' },
          'database-url': { type: 'string' },
          prefill: { type: 'string', default: '0' },
          workers: { type: 'string', default: '1' },
          scenarios: {
            type: 'string',
            default: [...SCENARIOS, BATCH, STREAMS, CLI_STARTUP].map((s) => s.name).join(','),
          },
          'find-rows': { type: 'string', default: String(FIND_ROWS) },
          'cli-runs': { type: 'string', default: '15' },
          'stream-readers': { type: 'string', default: String(STREAM_READERS) },
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
  if (opts.help) throw new Refusal(HELP, 0)

  // wrk refuses a zero duration, no threads, and fewer connections than threads.
  const duration = whole(opts.duration, 'duration', 1)
  const rounds = whole(opts.rounds, 'rounds', 1)
  const warmup = whole(opts.warmup, 'warmup', 0)
  const threads = whole(opts.threads, 'threads', 1)
  const connections = whole(opts.connections, 'connections', threads)
  const prefills = list(opts.prefill, 'prefill').map((p) => whole(p, 'prefill', 0))
  const workerCounts = list(opts.workers, 'workers')
  const scenarioNames = list(opts.scenarios, 'scenarios').flatMap((name) => GROUPS[name] ?? [name])
  const cliRuns = whole(opts['cli-runs'], 'cli-runs', 1)
  const findRows = whole(opts['find-rows'], 'find-rows', 1)
  const streamReaders = whole(opts['stream-readers'], 'stream-readers', 1)
  const given = opts['database-url']
  const location = given === undefined ? undefined : parseDatabaseUrl(given)
  if (given !== undefined && location?.kind !== 'postgres') {
    // A SQLite database is made fresh for each setup: one given would be left unused without a word.
    refuse('--database-url takes a postgres:// URL; without it each setup gets a fresh SQLite file')
  }
  const databaseUrl = location?.kind === 'postgres' ? location.url : undefined

  const loneNames = [CLI_STARTUP.name, BATCH.name, STREAMS.name]
  const unknownScenarios = scenarioNames.filter(
    (name) => !loneNames.includes(name) && !SCENARIOS.some((s) => s.name === name),
  )
  if (unknownScenarios.length > 0) {
    // Skipped quietly, a misspelt scenario would make a run that measured less than it was asked to.
    refuse(
      `unknown scenario ${unknownScenarios.join(', ')}: the scenarios are ${[...Object.keys(GROUPS), ...SCENARIOS.map((s) => s.name), BATCH.name, STREAMS.name, CLI_STARTUP.name].join(', ')}`,
    )
  }
  return {
    duration,
    rounds,
    warmup,
    connections,
    threads,
    prefills,
    workerCounts,
    scenarios: SCENARIOS.filter((s) => scenarioNames.includes(s.name)),
    cliRuns: scenarioNames.includes(CLI_STARTUP.name) ? cliRuns : undefined,
    findRows,
    batch: scenarioNames.includes(BATCH.name),
    streams: scenarioNames.includes(STREAMS.name),
    streamReaders,
    databaseUrl,
    perf: opts.perf,
    out: opts.out,
  }
}
