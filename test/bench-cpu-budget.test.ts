import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import {
  busiestThreadSeconds,
  cpuBudget,
  cpuPerRequestUs,
  statCpuSeconds,
  threadCpuSeconds,
} from '../bench/cpu-budget.js'

describe("the benchmark's CPU budget", () => {
  it('gives each request the cores less what wrk takes, and one core to any one thread', () => {
    // 40,000 requests/s on 2 cores: 50 µs each in all, 25 µs in one thread; wrk takes 10 of the 50.
    expect(cpuBudget(40_000, 2, 10)).toEqual({
      rate: 40_000,
      cores: 2,
      wrkUs: 10,
      allThreadsUs: 40,
      oneThreadUs: 25,
    })
    // One core busy at 20,000 requests/s is 50 µs a request.
    expect(cpuPerRequestUs(100, 20_000)).toBe(50)
    expect(cpuPerRequestUs(150, 10_000)).toBe(150)
    expect(cpuPerRequestUs(50, 0)).toBeNaN()
  })

  it('reads utime and stime past a command name holding spaces and parentheses', () => {
    const fields = ['S', ...Array.from({ length: 10 }, (_, i) => String(i + 1)), '250', '75', '0', '0']
    expect(statCpuSeconds(`123 (node (x) y) ${fields.join(' ')}`)).toBe(3.25)
  })

  it('finds the thread that spun as the busiest, apart from the other threads of the process', async () => {
    const before = threadCpuSeconds([process.pid])
    expect(before.size).toBeGreaterThan(1)
    // The thread stays (a timer keeps it) until terminated: one that ended after its message could be
    // gone from /proc before its time is read, and count for nothing.
    const worker = new Worker(
      'const end = Date.now() + 400; while (Date.now() < end); require("node:worker_threads").parentPort.postMessage(1); setInterval(() => {}, 1000)',
      { eval: true },
    )
    await new Promise((resolve) => worker.once('message', resolve))
    const after = threadCpuSeconds([process.pid])
    await worker.terminate()
    const busiest = busiestThreadSeconds(before, after)
    expect(busiest).toBeGreaterThanOrEqual(0.3)
    expect(busiest).toBeLessThan(1.5)
    // A process that is not there has no threads to read.
    expect(threadCpuSeconds([2 ** 22 + 12345]).size).toBe(0)
  })
})
