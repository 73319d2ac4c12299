import { describe, expect, it } from 'vitest'
import type { BatchResult, BatchRun } from './batch.js'
import {
  combine,
  latencyRatios,
  type Measured,
  type ResultRow,
  type Round,
  ratios,
  settle,
} from './figures.js'
import { median } from './median.js'
import { Refusal, readOptions } from './options.js'
import { percentile } from './percentile.js'
import { launcherSettings } from './processes.js'
import type { Startup } from './startup.js'
import { intact, latencyOf, type StreamReading, type StreamsResult } from './streams.js'
import {
  batchVerdictLines,
  batchVerdicts,
  findVerdictLines,
  findVerdicts,
  startupVerdictLines,
  startupVerdicts,
  streamsVerdictLines,
  streamsVerdicts,
  unjudged,
  verdictLines,
  verdicts,
} from './verdicts.js'

const run = (rps: number, p99Ms: number, extra: Partial<Measured> = {}): Measured => ({
  requests: rps * 10,
  rps,
  p50Ms: p99Ms / 4,
  p99Ms,
  non2xx: 0,
  socketErrors: 0,
  wrkCpuPercent: 50,
  peakRssMb: 80,
  serverCpuPercent: 100,
  ...extra,
})

/** A row of creates against the reference, from the service's and the reference's rounds. */
const compared = (scenario: string, rounds: Array<[Measured, Measured]>): ResultRow =>
  settle({
    scenario,
    rows: 0,
    workers: '1',
    rounds: rounds.map(([plantstore, reference]) => ({ plantstore, reference, ceiling: run(40_000, 5) })),
  })

describe("the benchmark's figures", () => {
  it('takes the middle of an odd count and the mean of the two middles of an even one', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([5])).toBe(5)
  })

  it('takes the nearest-rank percentile: p99 of 200 values is the 198th smallest', () => {
    const values = Array.from({ length: 200 }, (_, i) => 200 - i)
    expect(percentile(values, 99)).toBe(198)
    expect(percentile(values, 50)).toBe(100)
    expect(percentile(values, 100)).toBe(200)
    expect(percentile([7], 99)).toBe(7)
    expect(percentile([3, 1, 2], 0)).toBe(1)
    expect(percentile([], 99)).toBeUndefined()
  })

  it("combines a server's runs: counts summed, the peak RSS the highest, the rest medians", () => {
    const combined = combine([
      run(100, 10, { peakRssMb: 90, non2xx: 1 }),
      run(300, 30),
      run(200, 20, { socketErrors: 2 }),
    ])
    expect(combined).toMatchObject({
      requests: 6000,
      rps: 200,
      p99Ms: 20,
      peakRssMb: 90,
      non2xx: 1,
      socketErrors: 2,
    })
  })

  it("takes the median of the rounds' own ratios, not the ratio of the medians", () => {
    // The machine drifts between rounds: each round's pair moves together.
    const rounds: Round[] = [
      { plantstore: run(8_000, 12), reference: run(10_000, 10) },
      { plantstore: run(16_000, 6), reference: run(20_000, 5) },
      { plantstore: run(3_000, 20), reference: run(5_000, 10) },
    ]
    expect(ratios(rounds, 'reference')).toEqual({
      rps: 0.8,
      p99: 1.2,
      rounds: [
        { rps: 0.8, p99: 1.2 },
        { rps: 0.8, p99: 1.2 },
        { rps: 0.6, p99: 2 },
      ],
    })
    // A round without the other server does not count; none at all gives no ratio.
    expect(ratios([...rounds, { plantstore: run(1, 1) }], 'reference')).toMatchObject({ rps: 0.8, p99: 1.2 })
    expect(ratios(rounds, 'ceiling')).toBeUndefined()
  })
})

describe('the verdicts on creates against the durable reference', () => {
  it('requires 0.75 of its rate and at most 1.5 × its p99, and aims at 0.90', () => {
    const rows = [
      compared('create-random', [[run(7_600, 15), run(10_000, 10)]]),
      compared('create-ascending', [[run(7_400, 14), run(10_000, 10)]]),
    ]
    expect(verdicts(rows).map((v) => [v.scenario, v.level, v.target, v.measured, v.met])).toEqual([
      ['create-random', 'required', 'req/s ≥ 0.75 × reference', 0.76, true],
      ['create-random', 'required', 'p99 ≤ 1.5 × reference', 1.5, true],
      ['create-random', 'goal', 'req/s ≥ 0.9 × reference', 0.76, false],
      ['create-ascending', 'required', 'req/s ≥ 0.75 × reference', 0.74, false],
      ['create-ascending', 'required', 'p99 ≤ 1.5 × reference', 1.4, true],
      ['create-ascending', 'goal', 'req/s ≥ 0.9 × reference', 0.74, false],
    ])
    expect(unjudged(rows)).toEqual([])
    const goal = verdicts([compared('create-random', [[run(9_100, 16), run(10_000, 10)]])])
    expect(goal.map((v) => v.met)).toEqual([true, false, true])
  })

  it("prints each verdict with the rounds' own ratios beside their median", () => {
    const row = compared('create-ascending', [
      [run(8_000, 12), run(10_000, 10)],
      [run(9_000, 11), run(10_000, 10)],
      [run(7_000, 13), run(10_000, 10)],
    ])
    expect(verdicts([row])[0]).toMatchObject({ measured: 0.8, rounds: [0.8, 0.9, 0.7], met: true })
    expect(verdictLines([row]).slice(0, 2)).toEqual([
      'met      required  POST /plants, ascending ids: req/s ≥ 0.75 × reference, measured 0.8 (rounds: 0.8, 0.9, 0.7)',
      'met      required  POST /plants, ascending ids: p99 ≤ 1.5 × reference, measured 1.2 (rounds: 1.2, 1.1, 1.3)',
    ])
  })

  it('judges only creates measured against the reference, and names an id order left unjudged', () => {
    const read = settle({
      scenario: 'get',
      rows: 0,
      workers: '1',
      rounds: [{ plantstore: run(1, 1), ceiling: run(2, 1) }],
    })
    const twoWorkers = settle({
      scenario: 'create-ascending',
      rows: 0,
      workers: '2',
      rounds: [{ plantstore: run(1, 1), ceiling: run(2, 1) }],
    })
    const random = compared('create-random', [[run(5_000, 30), run(10_000, 10)]])
    expect(verdicts([read, twoWorkers, random]).map((v) => v.scenario)).toEqual([
      'create-random',
      'create-random',
      'create-random',
    ])
    expect(unjudged([read, twoWorkers, random])).toEqual(['create-ascending'])
    // A run that judged no creates at all has nothing to say of them.
    expect(unjudged([read, twoWorkers])).toEqual([])
    expect(verdictLines([read, twoWorkers, random])).toEqual([
      'NOT met  required  POST /plants, random ids: req/s ≥ 0.75 × reference, measured 0.5',
      'NOT met  required  POST /plants, random ids: p99 ≤ 1.5 × reference, measured 3',
      'NOT met  goal      POST /plants, random ids: req/s ≥ 0.9 × reference, measured 0.5',
      'not judged         POST /plants, ascending ids: not measured against the reference in this run',
    ])
  })
})

describe('the verdicts on the find pages against the first page on the same store', () => {
  /** A page's row from its p50 and p99 in each round, held to the plain page's. */
  const page = (
    scenario: string,
    own: Array<[number, number]>,
    plain: Array<[number, number]>,
  ): ResultRow => {
    const rounds = (latencies: Array<[number, number]>): Round[] =>
      latencies.map(([p50Ms, p99Ms]) => ({ plantstore: run(1_000, p99Ms, { p50Ms }) }))
    const row = settle({ scenario, rows: 1_000_000, workers: '1', rounds: rounds(own) })
    const vsPlain = latencyRatios(row.rounds, rounds(plain))
    return vsPlain ? { ...row, vsPlain } : row
  }

  it("takes the median of the rounds' own ratios at p50 and at p99", () => {
    const row = page(
      'find-search',
      [
        [20, 60],
        [10, 40],
        [40, 90],
      ],
      [
        [10, 20],
        [10, 10],
        [10, 30],
      ],
    )
    expect(row.vsPlain).toEqual({
      p50: 2,
      p99: 3,
      rounds: [
        { p50: 2, p99: 3 },
        { p50: 1, p99: 4 },
        { p50: 4, p99: 3 },
      ],
    })
    // Without the plain page's rounds there is nothing to hold a page to.
    expect(latencyRatios(row.rounds, [])).toBeUndefined()
  })

  it('requires p50 and p99 each at most 3 × the first page, and judges no page without a ratio', () => {
    // The plain page itself is measured, not judged: it has no ratio.
    const plain = settle({
      scenario: 'find-plain',
      rows: 1_000_000,
      workers: '1',
      rounds: [{ plantstore: run(1_000, 20, { p50Ms: 10 }) }],
    })
    const rows = [
      plain,
      page('find-search', [[30, 61]], [[10, 20]]),
      page('find-tags', [[31, 20]], [[10, 20]]),
    ]
    expect(findVerdicts(rows).map((v) => [v.scenario, v.level, v.target, v.measured, v.met])).toEqual([
      ['find-search', 'required', 'p50 ≤ 3 × first page', 3, true],
      ['find-search', 'required', 'p99 ≤ 3 × first page', 3.05, false],
      ['find-tags', 'required', 'p50 ≤ 3 × first page', 3.1, false],
      ['find-tags', 'required', 'p99 ≤ 3 × first page', 1, true],
    ])
    expect(findVerdictLines(rows.slice(1, 2))).toEqual([
      'met      required  find, search "fern": GET /plants?q=fern&limit=100: p50 ≤ 3 × first page, measured 3',
      'NOT met  required  find, search "fern": GET /plants?q=fern&limit=100: p99 ≤ 3 × first page, measured 3.05',
    ])
    // Not among the creates' verdicts.
    expect(verdicts(rows)).toEqual([])
  })
})

describe('the verdicts on batch creates against single creates', () => {
  const side = (plantsPerSecond: number, errors = 0): BatchRun => ({
    plants: 1000,
    requests: 1000,
    seconds: 1000 / plantsPerSecond,
    plantsPerSecond,
    p50Ms: 1,
    p99Ms: 2,
    errors,
  })
  const result = (pairs: Array<[number, number, number?]>): BatchResult => {
    const rounds = pairs.map(([singles, batches, errors]) => ({
      singles: side(singles),
      batches: side(batches, errors),
      ratio: batches / singles,
    }))
    return { workers: '1', rounds, ratio: median(rounds.map((r) => r.ratio)) }
  }

  it("requires the batches' plants a second at least 5 × the single creates', every request succeeding", () => {
    const met = result([
      [1_000, 5_000],
      [1_000, 4_000],
      [800, 6_400],
    ])
    expect(batchVerdicts([met])).toEqual([
      {
        level: 'required',
        scenario: 'batch',
        target: 'plants/s ≥ 5 × single creates',
        measured: 5,
        rounds: [5, 4, 8],
        met: true,
      },
    ])
    expect(batchVerdicts([result([[1_000, 4_900]])])[0]?.met).toBe(false)
    // A batch refused fast is no batch created fast.
    expect(batchVerdicts([result([[1_000, 50_000, 1]])])[0]?.met).toBe(false)
    expect(batchVerdictLines([met])).toEqual([
      'met      required  POST /plants/batch against single creates: plants/s ≥ 5 × single creates, measured 5 (rounds: 5, 4, 8)',
    ])
    // A build without the route is reported skipped, and not judged.
    expect(batchVerdicts([{ workers: '1', skipped: 'route not in this build', rounds: [] }])).toEqual([])
  })
})

describe('the verdicts on creates with streams open against none', () => {
  const reading = (extra: Partial<StreamReading> = {}): StreamReading => ({
    readers: 100,
    probes: { sent: 41, failed: 0 },
    latencyMs: [],
    missing: 0,
    changesRead: { min: 9000, max: 9000 },
    unordered: 0,
    ends: 0,
    ...extra,
  })
  /** Rounds of [creates/s with none, with streams, the readers' p99], the readers' report as given. */
  const result = (pairs: Array<[number, number, number, Partial<StreamReading>?]>): StreamsResult => {
    const rounds = pairs.map(([none, streams, p99, extra]) => {
      const read = reading(extra)
      const [without, withStreams] = [run(none, 10), run(streams, 12)]
      return {
        none: without,
        streams: withStreams,
        ratio: streams / none,
        readers: { ...read, latency: { p50: p99 / 4, p99, samples: 4000 }, cpuPercent: 40 },
        intact: intact(without, withStreams, read),
      }
    })
    const p99s = rounds.map((r) => r.readers.latency.p99)
    return {
      workers: '1',
      readers: 100,
      rounds,
      ratio: median(rounds.map((r) => r.ratio)),
      latency: { p50: 1, p99: Math.max(...p99s), samples: 12000 },
    }
  }

  it("requires 0.9 of the creates a second with none, and a change's p99 to a reader of at most 250 ms", () => {
    const met = result([
      [10_000, 9_000, 40],
      [10_000, 9_500, 250],
      [8_000, 6_400, 30],
    ])
    expect(streamsVerdicts([met])).toEqual([
      {
        level: 'required',
        scenario: 'create-streams',
        target: 'creates/s with 100 streams open ≥ 0.9 × with none',
        measured: 0.9,
        rounds: [0.9, 0.95, 0.8],
        met: true,
      },
      {
        level: 'required',
        scenario: 'create-streams',
        target: 'change to reader p99 ≤ 250 ms',
        measured: 250,
        rounds: [40, 250, 30],
        met: true,
      },
    ])
    expect(streamsVerdicts([result([[10_000, 8_900, 10]])]).map((v) => v.met)).toEqual([false, true])
    expect(streamsVerdicts([result([[10_000, 9_900, 251]])]).map((v) => v.met)).toEqual([true, false])
    expect(streamsVerdictLines([met])).toEqual([
      'met      required  POST /plants, ascending ids, with open streams against none: creates/s with 100 streams open ≥ 0.9 × with none, measured 0.9 (rounds: 0.9, 0.95, 0.8)',
      'met      required  POST /plants, ascending ids, with open streams against none: change to reader p99 ≤ 250 ms, measured 250 (rounds: 40, 250, 30)',
    ])
  })

  it.each([
    ['a stream ended', { ends: 1 }],
    ['a change read twice', { unordered: 1 }],
    ["a probe's change that never arrived", { missing: 1 }],
    ['a probe refused', { probes: { sent: 41, failed: 1 } }],
    ['readers that read different changes', { changesRead: { min: 8999, max: 9000 } }],
    ['no changes read', { changesRead: null }],
  ])('meets neither with %s, however fast', (_what, extra) => {
    const verdicts = streamsVerdicts([result([[10_000, 10_000, 5, extra]])])
    expect(verdicts.map((v) => v.met)).toEqual([false, false])
  })

  it('meets neither with a create that failed, and judges no run without samples or a skipped build', () => {
    const failed = result([[10_000, 10_000, 5]])
    const [round] = failed.rounds
    if (round) round.intact = intact(run(10_000, 5, { non2xx: 1 }), round.streams, reading())
    expect(streamsVerdicts([failed]).map((v) => v.met)).toEqual([false, false])
    const { latency: _none, ...unsampled } = result([[10_000, 10_000, 5]])
    expect(streamsVerdicts([unsampled])[1]).toMatchObject({ measured: Number.POSITIVE_INFINITY, met: false })
    expect(latencyOf([])).toBeNull()
    expect(latencyOf([3, 1, 2, 250])).toEqual({ p50: 2, p99: 250, samples: 4 })
    expect(
      streamsVerdicts([{ workers: '1', readers: 100, skipped: 'route not in this build', rounds: [] }]),
    ).toEqual([])
  })
})

describe("the verdicts on the CLI's start-up against node -e 0", () => {
  const startup = (help: number, create: number): Startup => ({
    runs: 3,
    commands: [
      { name: 'node', label: 'node -e 0', runsMs: [100, 100, 100], medianMs: 100, vsNode: 1 },
      { name: 'help', label: 'plantstore --help', runsMs: [], medianMs: help, vsNode: help / 100 },
      {
        name: 'token-create',
        label: 'plantstore token create',
        runsMs: [],
        medianMs: create,
        vsNode: create / 100,
      },
    ],
  })

  it('requires --help and token create each to take at most 3 × the wall time of node -e 0', () => {
    expect(startupVerdicts(startup(300, 301)).map((v) => [v.scenario, v.level, v.target, v.met])).toEqual([
      ['cli', 'required', 'plantstore --help ≤ 3 × node -e 0', true],
      ['cli', 'required', 'plantstore token create ≤ 3 × node -e 0', false],
    ])
    expect(startupVerdictLines(startup(160, 420))).toEqual([
      'met      required  CLI start-up: plantstore --help ≤ 3 × node -e 0, measured 1.6',
      'NOT met  required  CLI start-up: plantstore token create ≤ 3 × node -e 0, measured 4.2',
    ])
    // A run that did not measure it has nothing to say of it.
    expect(startupVerdicts(undefined)).toEqual([])
  })
})

describe("the benchmark's options", () => {
  const refusal = (...args: string[]) => {
    try {
      readOptions(args)
    } catch (error) {
      if (error instanceof Refusal) return { code: error.code, message: error.message }
      throw error
    }
    throw new Error('not refused')
  }

  it('reads `create` as both id orders, and keeps the scenarios in their own order', () => {
    expect(readOptions(['--scenarios', 'create']).scenarios.map((s) => s.name)).toEqual([
      'create-random',
      'create-ascending',
    ])
    expect(readOptions(['--scenarios', 'update,create-ascending']).scenarios.map((s) => s.name)).toEqual([
      'create-ascending',
      'update',
    ])
    expect(readOptions([]).scenarios).toHaveLength(10)
    expect(readOptions(['--scenarios', 'find,get']).scenarios.map((s) => s.name)).toEqual([
      'get',
      'find-plain',
      'find-search',
      'find-tags',
      'find-updated',
    ])
    expect(refusal('--help')).toMatchObject({
      code: 0,
      message: expect.stringContaining('usage: npm run bench'),
    })
  })

  it('measures the CLI start-up by default and as the cli scenario, alone or not, and not otherwise', () => {
    expect(readOptions([]).cliRuns).toBe(15)
    expect(readOptions(['--scenarios', 'cli'])).toMatchObject({ scenarios: [], cliRuns: 15 })
    expect(readOptions(['--scenarios', 'cli,get', '--cli-runs', '3'])).toMatchObject({
      scenarios: [expect.objectContaining({ name: 'get' })],
      cliRuns: 3,
    })
    expect(readOptions(['--scenarios', 'create']).cliRuns).toBeUndefined()
  })

  it('measures batch creates by default and as the batch scenario, and imports a million plants for the find pages', () => {
    expect(readOptions([])).toMatchObject({ batch: true, findRows: 1_000_000 })
    expect(readOptions(['--scenarios', 'batch'])).toMatchObject({ scenarios: [], batch: true })
    expect(readOptions(['--scenarios', 'find', '--find-rows', '500'])).toMatchObject({
      batch: false,
      findRows: 500,
    })
  })

  it('measures creates with 100 open streams by default and as the create-streams scenario, and not in `create`', () => {
    expect(readOptions([])).toMatchObject({ streams: true, streamReaders: 100 })
    expect(readOptions(['--scenarios', 'create-streams', '--stream-readers', '10'])).toMatchObject({
      scenarios: [],
      streams: true,
      streamReaders: 10,
    })
    expect(readOptions(['--scenarios', 'create']).streams).toBe(false)
  })

  it.each([
    [['--rounds', '0'], 'bench: --rounds must be a whole number of at least 1, not "0"'],
    [['--cli-runs', '0'], 'bench: --cli-runs must be a whole number of at least 1, not "0"'],
    [['--find-rows', '0'], 'bench: --find-rows must be a whole number of at least 1, not "0"'],
    [['--stream-readers', '0'], 'bench: --stream-readers must be a whole number of at least 1, not "0"'],
    // wrk would refuse these only once the servers had started, with a usage text and exit 1.
    [['--duration', '0'], 'bench: --duration must be a whole number of at least 1, not "0"'],
    [['--threads', '0'], 'bench: --threads must be a whole number of at least 1'],
    [['--threads', '4', '--connections', '2'], 'bench: --connections must be a whole number of at least 4'],
    [['--scenarios', ','], 'bench: --scenarios needs at least one value'],
    [['--connection', '2'], "bench: Unknown option '--connection'"],
    [['--duration'], "bench: Option '--duration <value>' argument missing"],
    // A SQLite database is made fresh for each setup: one given would be left unused.
    [['--database-url', 'sqlite:x.db'], 'bench: --database-url takes a postgres:// URL'],
    // Skipped quietly, it would make a run that measured less than asked.
    [
      ['--scenarios', 'create,read'],
      'bench: unknown scenario read: the scenarios are create, find, create-random',
    ],
  ])('refuses %j before anything starts, with exit 2', (args, message) => {
    expect(refusal(...args)).toEqual({ code: 2, message: expect.stringContaining(message) })
  })

  it("reads the launcher's environment and node flags, with or without env -S", () => {
    expect(launcherSettings('#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4')).toEqual({
      env: { MALLOC_ARENA_MAX: '2' },
      nodeFlags: ['--max-semi-space-size=4'],
    })
    expect(launcherSettings('#!/usr/bin/env node')).toEqual({ env: {}, nodeFlags: [] })
  })
})
