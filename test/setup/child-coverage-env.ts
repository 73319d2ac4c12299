import { inject } from 'vitest'

// Set once the worker runs, so that only the processes its tests start collect their coverage.
const dir = inject('childCoverageDir')
if (dir) process.env.NODE_V8_COVERAGE = dir
