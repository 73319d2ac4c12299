// What a measured load yields, and how a run's rows are made of the rounds.
import type { CpuBudget } from './cpu-budget.js'
import { median } from './median.js'
import type { PerfSummary } from './perf-profile.js'

export interface Load {
  requests: number
  rps: number
  p50Ms: number
  p99Ms: number
  non2xx: number
  socketErrors: number
  wrkCpuPercent: number
}

export interface Measured extends Load {
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
export interface Round {
  /** The mean of the ceiling runs just before and just after this round's servers (see bracket). */
  ceiling: Measured
  /** The reference servers' runs, by name (see REFERENCES). */
  references?: Record<string, Measured>
  service: Measured
}

/** A reference server over the rounds: its figures combined, and its medians of the rounds' ratios. */
export interface ReferenceRow {
  name: string
  measured: Measured
  ratio: number
  p99VsCeiling: number
}

export interface ResultRow {
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
export interface CpuUse {
  server: string
  allThreadsUs: number
  busiestThreadUs: number
}

export interface CpuFigures {
  budget: CpuBudget
  used: CpuUse[]
}

/** One server's rounds as one row: counts summed, the peak RSS the highest, the rest medians. */
export function combine(rounds: Measured[]): Measured {
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
export const bracket = (before: Measured, after: Measured): Measured => combine([before, after])

/**
 * A server's rounds, each beside the ceiling measured in the same round: its combined figures, and the
 * medians of its per-round req/s and p99 ratios to that ceiling.
 */
export function againstCeiling(rounds: Array<{ ceiling: Measured; measured: Measured }>): {
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
