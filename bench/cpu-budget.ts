import { readdirSync, readFileSync } from 'node:fs'

// What a server may spend per request to reach a target rate on this machine, and what it spent.
// The ratio targets compare servers that share the machine's cores with the load generator: at a
// rate R, the cores give R requests at most cores / R seconds of CPU each, wrk takes its share of
// that, and no single thread (an event loop) can use more than one core, 1 / R seconds a request.
// Set beside what each server used per request in the same run, this says whether a target is
// reachable by making one thread faster, or only by using less CPU in all of them.

/** CPU time per request in microseconds, from a CPU share (100 = one core busy) and a rate. */
export function cpuPerRequestUs(cpuPercent: number, rps: number): number {
  return rps > 0 ? (cpuPercent / 100 / rps) * 1e6 : Number.NaN
}

export interface CpuBudget {
  /** The target rate, requests per second. */
  rate: number
  cores: number
  /** What wrk spends per request (all its threads), taken from the same run. */
  wrkUs: number
  /** CPU per request left to the server at that rate, all of its threads together. */
  allThreadsUs: number
  /** CPU per request any one thread of the server may use at that rate: one core's worth. */
  oneThreadUs: number
}

export function cpuBudget(rate: number, cores: number, wrkUs: number): CpuBudget {
  return {
    rate,
    cores,
    wrkUs,
    allThreadsUs: (cores * 1e6) / rate - wrkUs,
    oneThreadUs: 1e6 / rate,
  }
}

/** CPU seconds (user + system) used so far by each thread of the given processes, by thread id. */
export function threadCpuSeconds(pids: number[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const pid of pids) {
    let tids: string[]
    try {
      tids = readdirSync(`/proc/${pid}/task`)
    } catch {
      continue
    }
    for (const tid of tids) {
      try {
        out.set(`${pid}/${tid}`, statCpuSeconds(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')))
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  }
  return out
}

/** utime + stime of a /proc stat line, in seconds (clock ticks of 1/100 s, as Linux reports them). */
export function statCpuSeconds(stat: string): number {
  // The command name in parentheses may hold spaces; the fields after it are space separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The CPU seconds of the thread that used the most between two readings (a new thread counts from 0). */
export function busiestThreadSeconds(before: Map<string, number>, after: Map<string, number>): number {
  let most = 0
  for (const [tid, seconds] of after) most = Math.max(most, seconds - (before.get(tid) ?? 0))
  return most
}
