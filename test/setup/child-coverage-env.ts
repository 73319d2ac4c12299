import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

// Keeps the coverage of a process a test ends at once, or limits in the size of the files it writes.
const HOOKS = fileURLToPath(new URL('./child-coverage-hooks.mjs', import.meta.url))

// Set once the worker runs, so that only the processes its tests start collect their coverage.
const dir = inject('childCoverageDir')
if (dir) {
  process.env.NODE_V8_COVERAGE = dir
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, `--import=${HOOKS}`].filter(Boolean).join(' ')
}
