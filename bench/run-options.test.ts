import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { lacking } from '../test/helpers/requirement.js'
import type { ResultRow } from './figures.js'
import { perfUnavailable } from './perf-profile.js'
import { ROOT, run, shortRun, tempDir } from './short-run.js'

// perf runs only where it is installed and the kernel lets it sample: the check `--perf` itself makes.
const perfSamples = (await perfUnavailable()) === undefined

// The run's options that change what it does around the measurements: --perf, bad options, and a
// service that fails to start.
describe('npm run bench, around the measurements', () => {
  it.skipIf(lacking(perfSamples, 'Linux perf (Debian: linux-perf) cannot sample here'))(
    "with --perf says where the service's event loop spent each measured run, and leaves no map behind",
    async () => {
      // A warm-up first: the first second of a cold service is mostly compiling, with few creates sampled.
      const { report, dir } = await shortRun('--scenarios', 'create-random', '--perf', '--warmup', '1')
      const [row] = report.results as [ResultRow]
      expect(row.profiles?.map((p) => p.round)).toEqual([1])
      for (const profile of row.profiles ?? []) {
        const { summary } = profile
        expect(summary.cpuSeconds).toBeGreaterThan(0.01)
        expect(summary.cpuSeconds).toBeLessThan(2)
        expect(summary.byObject.map((o) => o.name)).toContain('node')
        // The creates' inserts and commits run on the event loop: SQLite's statements are sampled there.
        expect(summary.frames.find((f) => f.name === 'sqlite3_step')?.percent).toBeGreaterThan(0)
        expect(readFileSync(profile.file, 'utf8')).toMatch(/^CPU sampled: [\d.]+ s over \d+ requests/m)
        for (const pid of profile.pids) expect(existsSync(`/tmp/perf-${pid}.map`)).toBe(false)
        expect(dirname(profile.file)).toBe(join(dir, 'profiles'))
      }
      expect(readdirSync(join(dir, 'profiles')).filter((f) => f.endsWith('-v8.log'))).toEqual([])
    },
    150_000,
  )

  it('removes its databases when the service fails to start', async () => {
    // A temporary folder of its own, so that only this run's leftovers are counted.
    const tmp = tempDir()
    const failed = await run(
      'npx',
      ['tsx', 'bench/run.ts', '--duration', '1', '--rounds', '1', '--scenarios', 'create', '--workers', '0'],
      { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, timeout: 60_000 },
    ).catch((error: { code: number; stderr: string }) => error)
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringContaining('invalid --workers') })
    expect(readdirSync(tmp).filter((name) => name.startsWith('plantstore-'))).toEqual([])
  }, 90_000)

  it('refuses bad options with exit 2 before anything starts', async () => {
    const failed = await run('npx', ['tsx', 'bench/run.ts', '--rounds', '0'], { cwd: ROOT }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
    expect(failed).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('--rounds must be') })
    expect(failed.stderr).not.toContain('round 1')
  })
})
