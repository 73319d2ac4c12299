// The performance targets the project holds itself to, judged on a run's rows.
import type { ResultRow } from './figures.js'
import { fmt } from './format.js'
import { median } from './median.js'

/** One performance target of the project, judged on this run's figures. */
export interface Verdict {
  target: string
  measured: string
  met: boolean
}

export const CREATE_RATIO = 0.8
const P99_FACTOR = 2
const RSS_MB = 120
const FLAT_TOLERANCE = 0.1
const LIST_ROWS = 1_000_000

/**
 * How the creates' ratio to the ceiling changed from the empty store to the fullest: each round's
 * ratio with the plants stored against the same round's on the empty store, measured one beside the
 * other (measureTogether), and the median of those changes, which the verdict judges.
 */
function flatChange(empty: ResultRow, fullest: ResultRow): { change: number; rounds: number[] } {
  const ratios = (row: ResultRow) => (row.rounds ?? []).map((r) => r.service.rps / r.ceiling.rps)
  const [before, after] = [ratios(empty), ratios(fullest)]
  const rounds = after.map((ratio, i) => ratio / (before[i] as number) - 1)
  return { change: median(rounds), rounds }
}

/** A change as the verdicts print it: its sign always, one decimal. */
const signedPercent = (change: number) => `${change >= 0 ? '+' : ''}${fmt(change * 100, 1)} %`

/** The targets the project holds itself to, each judged from the rows this run measured. */
export function verdicts(rows: ResultRow[]): Verdict[] {
  const measured = rows.filter((r) => r.service && r.ceiling && r.workers === '1')
  const out: Verdict[] = []
  const creates = measured.filter((r) => r.scenario === 'create')
  for (const row of creates) {
    const at = `${fmt(row.rows)} stored`
    out.push({
      target: `POST /plants req/s ≥ ${CREATE_RATIO} × ceiling (${at})`,
      measured: fmt(row.ratio ?? 0, 2),
      met: (row.ratio ?? 0) >= CREATE_RATIO,
    })
    out.push({
      target: `POST /plants p99 ≤ ${P99_FACTOR} × ceiling's (${at})`,
      measured: `${fmt(row.p99VsCeiling ?? 0, 2)}×`,
      met: (row.p99VsCeiling ?? Number.POSITIVE_INFINITY) <= P99_FACTOR,
    })
    out.push({
      target: `POST /plants peak RSS ≤ ${RSS_MB} MB (${at})`,
      measured: `${fmt(row.service?.peakRssMb ?? 0)} MB`,
      met: (row.service?.peakRssMb ?? Number.POSITIVE_INFINITY) <= RSS_MB,
    })
  }
  const empty = creates.find((r) => r.rows === 0)
  const fullest = creates.reduce<ResultRow | undefined>(
    (a, r) => (r.rows > (a?.rows ?? 0) ? r : a),
    undefined,
  )
  if (empty?.ratio && fullest?.ratio) {
    const { change, rounds } = flatChange(empty, fullest)
    out.push({
      target: `POST /plants flat within ±${FLAT_TOLERANCE * 100} % from 0 to ${fmt(fullest.rows)} stored (ratio to ceiling)`,
      // The rounds' own changes beside their median: on a noisy machine they differ by a fifth, and
      // a verdict they straddle is one the next run may turn.
      measured: `${signedPercent(change)} (rounds: ${rounds.map(signedPercent).join(', ')})`,
      met: Math.abs(change) <= FLAT_TOLERANCE,
    })
  }
  for (const row of measured.filter((r) => r.scenario === 'list' && r.rows >= LIST_ROWS)) {
    out.push({
      target: `GET /plants?limit=100 p99 ≤ ${P99_FACTOR} × ceiling's (${fmt(row.rows)} stored)`,
      measured: `${fmt(row.p99VsCeiling ?? 0, 2)}×`,
      met: (row.p99VsCeiling ?? Number.POSITIVE_INFINITY) <= P99_FACTOR,
    })
  }
  return out
}
