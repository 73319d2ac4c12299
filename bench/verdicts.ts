// What the service's creates are held to: the durable reference's rate and latency, measured in the
// same run, for random ids and for ascending ones. The reference is the least a server giving the
// same guarantees must do on this machine, so a shortfall is the service's own work.
import type { ResultRow } from './figures.js'
import { fmt } from './format.js'
import { SCENARIOS } from './scenarios.js'

/** The service's creates/s at least this share of the reference's, for both id orders. */
export const REQUIRED_RPS = 0.75
/** Its p99 at most this many times the reference's. */
export const REQUIRED_P99 = 1.5
/** Where it should stand. */
export const GOAL_RPS = 0.9

export interface Verdict {
  level: 'required' | 'goal'
  scenario: string
  target: string
  measured: number
  /** The rounds' own ratios, of which `measured` is the median. */
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

/**
 * In a run that judged creates, the id orders it left unjudged: the requirement holds for both, so a
 * run of one alone must not read as a pass.
 */
export function unjudged(rows: ResultRow[]): string[] {
  if (!rows.some((r) => r.vsReference)) return []
  return JUDGED.filter((name) => !rows.some((r) => r.scenario === name && r.vsReference))
}

/** The verdicts as the report prints them, one a line. */
export function verdictLines(rows: ResultRow[]): string[] {
  const label = (name: string) => SCENARIOS.find((s) => s.name === name)?.label ?? name
  // The rounds beside the median: on a noisy machine they spread, and a verdict they straddle is one
  // the next run may turn.
  const lines = verdicts(rows).map(
    (v) =>
      `${v.met ? 'met    ' : 'NOT met'}  ${v.level.padEnd(8)}  ${label(v.scenario)}: ${v.target}, measured ${fmt(v.measured, 2)}` +
      (v.rounds.length > 1 ? ` (rounds: ${v.rounds.map((r) => fmt(r, 2)).join(', ')})` : ''),
  )
  for (const name of unjudged(rows)) {
    lines.push(`not judged         ${label(name)}: not measured against the reference in this run`)
  }
  return lines
}
