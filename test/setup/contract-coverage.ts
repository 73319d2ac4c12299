import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'

/**
 * Collects the operations every test file exercised (test/helpers/contract.ts) and, when the whole
 * suite ran, fails the run if a documented operation was never called.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-contract-'))
  project.provide('contractRecordDir', dir)
  return async () => {
    const documented = new Set<string>()
    const exercised = new Set<string>()
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { documented: string[]; exercised: string[] }
        for (const id of entry.documented) documented.add(id)
        for (const id of entry.exercised) exercised.add(id)
      }
    }
    rmSync(dir, { recursive: true, force: true })
    // Files named on the command line do not show in the project's config: a run is partial when it
    // ran fewer files than the config includes.
    const { testFiles } = await project.globTestFiles()
    const ran = project.vitest.state.getFilepaths().length
    const partial = ran < testFiles.length || Boolean(project.config.testNamePattern)
    const missing = [...documented].filter((id) => !exercised.has(id))
    if (missing.length > 0 && !partial) {
      // A teardown error is only printed; the exit code is what makes the run fail.
      process.exitCode = 1
      console.error(`FAIL: documented operations never exercised by the tests: ${missing.join(', ')}`)
    }
  }
}
