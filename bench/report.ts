// The run's report: the table of every row, and the CPU line under the verdicts.
import { cpus } from 'node:os'
import { cpuBudget, cpuPerRequestUs } from './cpu-budget.js'
import type { CpuFigures, CpuUse, Measured, ResultRow } from './figures.js'
import { fmt } from './format.js'
import { SCENARIOS, type Scenario } from './scenarios.js'
import { CREATE_RATIO } from './targets.js'

export function table(rows: ResultRow[]): string {
  const header = [
    'scenario',
    'stored',
    'workers',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'req/s ÷ ceiling',
    'p99 ÷ ceiling',
    'wrk CPU',
    'server CPU',
    'errors',
  ]
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`]
  for (const row of rows) {
    const scenario = SCENARIOS.find((s) => s.name === row.scenario)?.label ?? row.scenario
    if (row.skipped) {
      lines.push(
        `| ${scenario} | ${fmt(row.rows)} | ${row.workers} | skipped: ${row.skipped} |${' |'.repeat(9)}`,
      )
      continue
    }
    for (const [name, m, ratio, p99] of [
      ['ceiling', row.ceiling, 1, 1] as const,
      ...(row.references ?? []).map((r) => [r.name, r.measured, r.ratio, r.p99VsCeiling] as const),
      ['plantstore', row.service, row.ratio, row.p99VsCeiling] as const,
    ]) {
      if (!m || ratio === undefined || p99 === undefined) continue
      const workers = name === 'plantstore' ? row.workers : '1'
      lines.push(
        `| ${scenario} | ${fmt(row.rows)} | ${workers} | ${name} | ${fmt(m.rps)} | ${fmt(m.p50Ms, 2)} | ${fmt(m.p99Ms, 2)} | ${fmt(m.peakRssMb)} | ${fmt(ratio, 2)} | ${fmt(p99, 2)} | ${fmt(m.wrkCpuPercent)}% | ${fmt(m.serverCpuPercent)}% | ${fmt(m.non2xx + m.socketErrors)} |`,
      )
    }
  }
  return lines.join('\n')
}

/**
 * What a create may cost in CPU at CREATE_RATIO of the ceiling's rate on this machine's cores, less
 * what wrk spent per request on the ceiling (the nearest rate to the target's), beside what each
 * server of the row spent per request.
 */
export function cpuFigures(row: ResultRow): CpuFigures | undefined {
  const ceiling = row.ceiling
  if (!ceiling || !row.service || !scenarioOf(row).creates || row.workers !== '1') return undefined
  const use = (server: string, m: Measured): CpuUse => ({
    server,
    allThreadsUs: cpuPerRequestUs(m.serverCpuPercent, m.rps),
    busiestThreadUs: cpuPerRequestUs(m.busiestThreadCpuPercent, m.rps),
  })
  return {
    budget: cpuBudget(
      CREATE_RATIO * ceiling.rps,
      cpus().length,
      cpuPerRequestUs(ceiling.wrkCpuPercent, ceiling.rps),
    ),
    used: [
      use('ceiling', ceiling),
      ...(row.references ?? []).map((r) => use(r.name, r.measured)),
      use('plantstore', row.service),
    ],
  }
}

export function scenarioOf(row: ResultRow): Scenario {
  return SCENARIOS.find((s) => s.name === row.scenario) as Scenario
}

/** How many plants were stored, and for creates other than the judged ones, which they were. */
export function whereMeasured(row: ResultRow): string {
  const stored = `${fmt(row.rows)} stored`
  return row.scenario === 'create' ? stored : `${scenarioOf(row).label}, ${stored}`
}

export function cpuLine(row: ResultRow, cpu: CpuFigures): string {
  const { budget } = cpu
  const used = cpu.used
    .map((u) => `${u.server} ${fmt(u.allThreadsUs, 1)} / ${fmt(u.busiestThreadUs, 1)}`)
    .join(', ')
  return (
    `for scale  CPU a create may use at ${CREATE_RATIO} × ceiling (${fmt(budget.rate)}/s on ${budget.cores} cores, ` +
    `wrk taking ${fmt(budget.wrkUs, 1)} µs a request), ${whereMeasured(row)}: ${fmt(budget.allThreadsUs, 1)} µs in all ` +
    `threads, ${fmt(budget.oneThreadUs, 1)} µs in any one; used, all threads / busiest thread, µs: ${used}`
  )
}
