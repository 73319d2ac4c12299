import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

// Lets a test end a process it started at once without losing that process's coverage.
const COVERAGE_ON_KILL = fileURLToPath(new URL('./coverage-on-kill.mjs', import.meta.url))

// Set once the worker runs, so that only the processes its tests start collect their coverage.
const dir = inject('childCoverageDir')
if (dir) {
  process.env.NODE_V8_COVERAGE = dir
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--import=${COVERAGE_ON_KILL}`]
    .filter(Boolean)
    .join(' ')
}
