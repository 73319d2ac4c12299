import { chmodSync, mkdirSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import type { TestProject } from 'vitest/node'

/**
 * Where the server and CLI processes the tests start write their V8 coverage (NODE_V8_COVERAGE).
 * The coverage provider (coverage-provider.ts) counts it into the run's own.
 */
export const CHILD_COVERAGE_DIR = resolve('.tmp/child-coverage')

declare module 'vitest' {
  export interface ProvidedContext {
    childCoverageDir: string | null
  }
}

/**
 * When the run measures coverage, empties the directory the spawned processes write theirs to and
 * tells the test workers where it is (child-coverage-env.ts). A worker cannot simply inherit
 * NODE_V8_COVERAGE: Node would then collect the worker's own coverage too, beside vitest's.
 */
export default function setup(project: TestProject) {
  if (!project.config.coverage.enabled) {
    project.provide('childCoverageDir', null)
    return
  }
  rmSync(CHILD_COVERAGE_DIR, { recursive: true, force: true })
  mkdirSync(CHILD_COVERAGE_DIR, { recursive: true })
  // A few tests run the CLI as another user, whose coverage counts too.
  chmodSync(CHILD_COVERAGE_DIR, 0o1777)
  project.provide('childCoverageDir', CHILD_COVERAGE_DIR)
}
