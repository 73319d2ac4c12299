// What the service's creates are held to: the durable reference's rate and latency, measured in the
// same run, for random ids and for ascending ones. The reference is the least a server giving the
// same guarantees must do on this machine, so a shortfall is the service's own work. And what the
// CLI's start-up is held to: node's own, measured in the same run. What the find pages are held to:
// the plain first page on the same store; batch creates: single creates on the same service; and
// creates with streams open: the same creates with none, and a bound on a change's way to a reader.
import type { BatchResult } from './batch.js'
import type { ResultRow } from './figures.js'
import { fmt } from './format.js'
import { BATCH, CLI_STARTUP, SCENARIOS, STREAMS } from './scenarios.js'
import type { Startup } from './startup.js'
import type { StreamsResult } from './streams.js'

/** The service's creates/s at least this share of the reference's, for both id orders. */
export const REQUIRED_RPS = 0.75
/** Its p99 at most this many times the reference's. */
export const REQUIRED_P99 = 1.5
/** Where it should stand. */
export const GOAL_RPS = 0.9
/** `plantstore --help` and `token create` at most this many times the wall time of `node -e 0`. */
export const REQUIRED_STARTUP = 3
/** A find page's p50 and p99 at most this many times the plain first page's on the same store. */
export const REQUIRED_FIND = 3
/** Batch creates' plants a second at least this many times single creates'. */
export const REQUIRED_BATCH = 5
/** Creates a second with the streams open at least this share of those with none (within 10 %). */
export const REQUIRED_STREAMS = 0.9
/** A change's p99 from its create's response to a stream reader at most this many ms. */
export const REQUIRED_CHANGE_P99_MS = 250

export interface Verdict {
  level: 'required' | 'goal'
  scenario: string
  target: string
  measured: number
  /**
   * The rounds' own ratios, of which `measured` is the median; none for the CLI's start-up, which is
   * judged on the ratio of the commands' medians.
   */
  rounds: number[]
  met: boolean
}

/** The creates held to the reference: every create scenario, random ids and ascending. */
export const JUDGED = SCENARIOS.filter((s) => s.creates).map((s) => s.name)

/** The verdicts on every row measured against the reference. */
export function verdicts(rows: ResultRow[]): Verdict[] {
  return rows.flatMap(({ scenario, vsReference }) => {
    if (!vsReference || !JUDGED.includes(scenario)) return []
    const rps = vsReference.rounds.map((r) => r.rps)
    const p99 = vsReference.rounds.map((r) => r.p99)
    return [
      {
        level: 'required',
        scenario,
        target: `req/s ≥ ${REQUIRED_RPS} × reference`,
        measured: vsReference.rps,
        rounds: rps,
        met: vsReference.rps >= REQUIRED_RPS,
      },
      {
        level: 'required',
        scenario,
        target: `p99 ≤ ${REQUIRED_P99} × reference`,
        measured: vsReference.p99,
        rounds: p99,
        met: vsReference.p99 <= REQUIRED_P99,
      },
      {
        level: 'goal',
        scenario,
        target: `req/s ≥ ${GOAL_RPS} × reference`,
        measured: vsReference.rps,
        rounds: rps,
        met: vsReference.rps >= GOAL_RPS,
      },
    ]
  })
}

/** The verdicts on the CLI's start-up: each command against `node -e 0`. */
export function startupVerdicts(startup: Startup | undefined): Verdict[] {
  return (startup?.commands ?? [])
    .filter((command) => command.name !== 'node')
    .map((command) => ({
      level: 'required',
      scenario: CLI_STARTUP.name,
      target: `${command.label} ≤ ${REQUIRED_STARTUP} × node -e 0`,
      measured: command.vsNode,
      rounds: [],
      met: command.vsNode <= REQUIRED_STARTUP,
    }))
}

/** The verdicts on the find pages: each against the plain first page, at p50 and at p99. */
export function findVerdicts(rows: ResultRow[]): Verdict[] {
  return rows.flatMap(({ scenario, vsPlain }): Verdict[] =>
    vsPlain
      ? (['p50', 'p99'] as const).map((at) => ({
          level: 'required',
          scenario,
          target: `${at} ≤ ${REQUIRED_FIND} × first page`,
          measured: vsPlain[at],
          rounds: vsPlain.rounds.map((r) => r[at]),
          met: vsPlain[at] <= REQUIRED_FIND,
        }))
      : [],
  )
}

/** The verdicts on batch creates; a run with a failed request is not met, however fast. */
export function batchVerdicts(results: BatchResult[]): Verdict[] {
  return results.flatMap(({ rounds, ratio }): Verdict[] =>
    ratio === undefined
      ? []
      : [
          {
            level: 'required',
            scenario: BATCH.name,
            target: `plants/s ≥ ${REQUIRED_BATCH} × single creates`,
            measured: ratio,
            rounds: rounds.map((r) => r.ratio),
            met: ratio >= REQUIRED_BATCH && rounds.every((r) => r.singles.errors + r.batches.errors === 0),
          },
        ],
  )
}

/**
 * The verdicts on creates with streams open: their rate against none, and a change's p99 to the
 * readers. A round whose readers lost, repeated or missed a change, or whose stream ended, or with a
 * failed request, is not met, however fast: the streams it claims were not all open and read.
 */
export function streamsVerdicts(results: StreamsResult[]): Verdict[] {
  return results.flatMap(({ rounds, ratio, latency, readers }): Verdict[] => {
    if (ratio === undefined) return []
    const whole = rounds.every((r) => r.intact)
    return [
      {
        level: 'required',
        scenario: STREAMS.name,
        target: `creates/s with ${fmt(readers)} streams open ≥ ${REQUIRED_STREAMS} × with none`,
        measured: ratio,
        rounds: rounds.map((r) => r.ratio),
        met: ratio >= REQUIRED_STREAMS && whole,
      },
      {
        level: 'required',
        scenario: STREAMS.name,
        target: `change to reader p99 ≤ ${REQUIRED_CHANGE_P99_MS} ms`,
        // No sample at all is no bound kept.
        measured: latency?.p99 ?? Number.POSITIVE_INFINITY,
        rounds: rounds.map((r) => r.readers.latency?.p99 ?? Number.POSITIVE_INFINITY),
        met: latency !== undefined && latency.p99 <= REQUIRED_CHANGE_P99_MS && whole,
      },
    ]
  })
}

/**
 * In a run that judged creates, the id orders it left unjudged: the requirement holds for both, so a
 * run of one alone must not read as a pass.
 */
export function unjudged(rows: ResultRow[]): string[] {
  if (!rows.some((r) => r.vsReference)) return []
  return JUDGED.filter((name) => !rows.some((r) => r.scenario === name && r.vsReference))
}

const label = (name: string) =>
  [...SCENARIOS, BATCH, STREAMS, CLI_STARTUP].find((s) => s.name === name)?.label ?? name

/** A verdict as the report prints it. */
function verdictLine(v: Verdict): string {
  // The rounds beside the median: on a noisy machine they spread, and a verdict they straddle is one
  // the next run may turn.
  return (
    `${v.met ? 'met    ' : 'NOT met'}  ${v.level.padEnd(8)}  ${label(v.scenario)}: ${v.target}, measured ${fmt(v.measured, 2)}` +
    (v.rounds.length > 1 ? ` (rounds: ${v.rounds.map((r) => fmt(r, 2)).join(', ')})` : '')
  )
}

/** The verdicts on creates as the report prints them, one a line. */
export function verdictLines(rows: ResultRow[]): string[] {
  const lines = verdicts(rows).map(verdictLine)
  for (const name of unjudged(rows)) {
    lines.push(`not judged         ${label(name)}: not measured against the reference in this run`)
  }
  return lines
}

/** The verdicts on the CLI's start-up as the report prints them, one a line. */
export function startupVerdictLines(startup: Startup | undefined): string[] {
  return startupVerdicts(startup).map(verdictLine)
}

/** The verdicts on the find pages as the report prints them, one a line. */
export function findVerdictLines(rows: ResultRow[]): string[] {
  return findVerdicts(rows).map(verdictLine)
}

/** The verdicts on creates with streams open as the report prints them, one a line. */
export function streamsVerdictLines(results: StreamsResult[]): string[] {
  return streamsVerdicts(results).map(verdictLine)
}

/** The verdicts on batch creates as the report prints them, one a line. */
export function batchVerdictLines(results: BatchResult[]): string[] {
  return batchVerdicts(results).map(verdictLine)
}
