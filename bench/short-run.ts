// For the benchmark's own tests: a short, real run of it, and temporary folders removed after each test.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach } from 'vitest'
import type { BatchResult } from './batch.js'
import type { ResultRow } from './figures.js'
import type { Startup } from './startup.js'
import type { StreamsResult } from './streams.js'
import type { Verdict } from './verdicts.js'

export const run = promisify(execFile)
export const ROOT = join(import.meta.dirname, '..')

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temporary folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-test-'))
  dirs.push(dir)
  return dir
}

export interface Report {
  settings: { rounds: number }
  results: ResultRow[]
  batch: BatchResult[]
  streams: StreamsResult[]
  startup?: Startup
  verdicts: Verdict[]
}

/**
 * A short run of the benchmark with these options: one round of one second per server, no warm-up,
 * two connections, light enough not to crowd the test files running beside it.
 */
export async function shortRun(...args: string[]): Promise<{ report: Report; stdout: string; dir: string }> {
  const dir = tempDir()
  const out = join(dir, 'bench.json')
  const { stdout } = await run(
    'npx',
    [
      'tsx',
      'bench/run.ts',
      ...['--duration', '1', '--warmup', '0', '--rounds', '1', '--connections', '2', '--out', out],
      ...args,
    ],
    { cwd: ROOT, timeout: 120_000 },
  )
  return { report: JSON.parse(readFileSync(out, 'utf8')) as Report, stdout, dir }
}
