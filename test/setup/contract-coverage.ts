import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { isPartialRun, unanswered } from './contract-gaps.js'

/**
 * Collects the operations every test file exercised and the error answers each gave
 * (test/helpers/contract.ts) and, when the whole suite ran, fails the run if a documented operation
 * was never called, or an error code an operation lists was never answered by it.
 */
export default function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-contract-'))
  project.provide('contractRecordDir', dir)
  return async () => {
    const documented = new Set<string>()
    const exercised = new Set<string>()
    const listed = new Set<string>()
    const answered = new Set<string>()
    for (const file of readdirSync(dir)) {
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as Record<'documented' | 'exercised' | 'listed' | 'answered', string[]>
        for (const id of entry.documented) documented.add(id)
        for (const id of entry.exercised) exercised.add(id)
        for (const key of entry.listed) listed.add(key)
        for (const key of entry.answered) answered.add(key)
      }
    }
    rmSync(dir, { recursive: true, force: true })
    const { testFiles } = await project.globTestFiles()
    const partial = isPartialRun({
      ran: project.vitest.state.getFilepaths().length,
      configured: testFiles.length,
      testNamePattern: project.config.testNamePattern,
      cliExclude: project.config.cliExclude,
    })
    if (partial) return
    const missing = [...documented].filter((id) => !exercised.has(id))
    // A teardown error is only printed; the exit code is what makes the run fail.
    if (missing.length > 0) {
      process.exitCode = 1
      console.error(`FAIL: documented operations never exercised by the tests: ${missing.join(', ')}`)
    }
    const silent = unanswered(listed, answered)
    if (silent.length > 0) {
      process.exitCode = 1
      console.error(
        `FAIL: error codes the document lists that no test received (operation status code):\n  ${silent.join('\n  ')}`,
      )
    }
  }
}
