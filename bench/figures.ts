// What a measured load yields, and how a scenario's rounds become one row of the report.
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
  /** All of the server's processes and threads together: 100 is one core busy. */
  serverCpuPercent: number
  /** When the measured load began (after the warm-up): one run's, not a combination's. */
  startedAt?: string
}

/**
 * The servers of a run: the service; the durable reference (bench/reference.mjs), which it is held
 * to for creates; the ceiling (bench/ceiling.mjs), which stores nothing and is shown for scale.
 */
export const SERVERS = ['plantstore', 'reference', 'ceiling'] as const
export type ServerName = (typeof SERVERS)[number]

/** One round of a scenario: each server's run, taken one after the other. */
export type Round = Partial<Record<ServerName, Measured>>

/** The service against another server: the medians of the rounds' own ratios. */
export interface Ratios {
  /** The service's req/s ÷ the other's. */
  rps: number
  /** The service's p99 ÷ the other's. */
  p99: number
  /** Each round's own: how far apart they lie says how far to trust the medians. */
  rounds: Array<{ rps: number; p99: number }>
}

/** A find page's latency against the plain first page's on the same store: medians of the rounds' own. */
export interface LatencyRatios {
  p50: number
  p99: number
  rounds: Array<{ p50: number; p99: number }>
}

export interface ResultRow {
  scenario: string
  rows: number
  workers: string
  skipped?: string
  rounds: Round[]
  /** Each server's rounds combined (see combine). */
  servers: Round
  /** Creates on an empty store with one worker: the service against the durable reference. */
  vsReference?: Ratios
  /** For scale: the service against the ceiling. */
  vsCeiling?: Ratios
  /** A find page: its latency against the plain first page's, measured in the same rounds. */
  vsPlain?: LatencyRatios
  /** With --perf: where the service's event loop spent each round's measured run. */
  profiles?: Array<{ round: number; file: string; pids: number[]; summary: PerfSummary }>
}

/** One server's runs as one: counts summed, the peak RSS the highest, the rest medians. */
export function combine(runs: Measured[]): Measured {
  const mid = (pick: (m: Measured) => number) => median(runs.map(pick))
  const sum = (pick: (m: Measured) => number) => runs.reduce((total, m) => total + pick(m), 0)
  return {
    requests: sum((m) => m.requests),
    rps: mid((m) => m.rps),
    p50Ms: mid((m) => m.p50Ms),
    p99Ms: mid((m) => m.p99Ms),
    non2xx: sum((m) => m.non2xx),
    socketErrors: sum((m) => m.socketErrors),
    wrkCpuPercent: mid((m) => m.wrkCpuPercent),
    peakRssMb: Math.max(...runs.map((m) => m.peakRssMb)),
    serverCpuPercent: mid((m) => m.serverCpuPercent),
  }
}

/**
 * The service against another server, round by round. A shared machine's spare capacity drifts
 * within minutes; two servers measured in the same round, one right after the other, share most of
 * that drift, so the median of the rounds' ratios is steadier than a ratio of two medians.
 */
export function ratios(rounds: Round[], other: ServerName): Ratios | undefined {
  const paired = rounds.flatMap((r) => (r.plantstore && r[other] ? [[r.plantstore, r[other]] as const] : []))
  if (paired.length === 0) return undefined
  const each = paired.map(([service, them]) => ({
    rps: service.rps / them.rps,
    p99: service.p99Ms / them.p99Ms,
  }))
  return { rps: median(each.map((r) => r.rps)), p99: median(each.map((r) => r.p99)), rounds: each }
}

/** A scenario's row from its rounds. */
export function settle(row: Omit<ResultRow, 'servers'>): ResultRow {
  const servers: Round = {}
  for (const name of SERVERS) {
    const runs = row.rounds.flatMap((r) => r[name] ?? [])
    if (runs.length > 0) servers[name] = combine(runs)
  }
  const vsReference = ratios(row.rounds, 'reference')
  const vsCeiling = ratios(row.rounds, 'ceiling')
  return { ...row, servers, ...(vsReference ? { vsReference } : {}), ...(vsCeiling ? { vsCeiling } : {}) }
}

/**
 * A page's latency against another's measured in the same rounds (the service's run of each), round
 * by round as in ratios().
 */
export function latencyRatios(page: Round[], plain: Round[]): LatencyRatios | undefined {
  const each = page.flatMap((round, i) => {
    const [mine, theirs] = [round.plantstore, plain[i]?.plantstore]
    return mine && theirs ? [{ p50: mine.p50Ms / theirs.p50Ms, p99: mine.p99Ms / theirs.p99Ms }] : []
  })
  if (each.length === 0) return undefined
  return { p50: median(each.map((r) => r.p50)), p99: median(each.map((r) => r.p99)), rounds: each }
}
