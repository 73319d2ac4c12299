// The run's tables: one line per server and scenario, the service's ratios beside its own line; and
// one line per command of the CLI's start-up.
import { type ResultRow, SERVERS } from './figures.js'
import { fmt } from './format.js'
import { SCENARIOS } from './scenarios.js'
import type { Startup } from './startup.js'

const HEADER = [
  'scenario',
  'stored',
  'workers',
  'server',
  'req/s',
  'p50 ms',
  'p99 ms',
  'req/s ÷ reference',
  'p99 ÷ reference',
  'req/s ÷ ceiling',
  'peak RSS MB',
  'server CPU',
  'errors',
]

export function table(rows: ResultRow[]): string {
  const lines = [`| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => '---').join('|')}|`]
  for (const row of rows) {
    const scenario = SCENARIOS.find((s) => s.name === row.scenario)?.label ?? row.scenario
    const where = (workers: string) => `| ${scenario} | ${fmt(row.rows)} | ${workers} |`
    if (row.skipped) {
      lines.push(`${where(row.workers)} skipped: ${row.skipped} |${' |'.repeat(HEADER.length - 4)}`)
      continue
    }
    for (const name of SERVERS) {
      const m = row.servers[name]
      if (!m) continue
      const service = name === 'plantstore'
      const ratio = (n: number | undefined) => (service && n !== undefined ? fmt(n, 2) : '')
      lines.push(
        // The reference and the ceiling are one process each, whatever the service's workers.
        `${where(service ? row.workers : '1')} ${name} | ${fmt(m.rps)} | ${fmt(m.p50Ms, 2)} | ${fmt(m.p99Ms, 2)} | ${ratio(row.vsReference?.rps)} | ${ratio(row.vsReference?.p99)} | ${ratio(row.vsCeiling?.rps)} | ${fmt(m.peakRssMb)} | ${fmt(m.serverCpuPercent)}% | ${fmt(m.non2xx + m.socketErrors)} |`,
      )
    }
  }
  return lines.join('\n')
}

export function startupTable(startup: Startup): string {
  const lines = ['| command | median ms | ÷ node -e 0 |', '|---|---|---|']
  for (const command of startup.commands) {
    lines.push(`| ${command.label} | ${fmt(command.medianMs, 1)} | ${fmt(command.vsNode, 2)} |`)
  }
  return lines.join('\n')
}
