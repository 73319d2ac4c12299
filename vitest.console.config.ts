import { defineConfig } from 'vitest/config'
import { builtShapeValidators } from './test/setup/built-shape-validators.js'

// The console's tests: each drives headless Chromium through a real `plantstore serve`. They run after
// the rest of `npm test`, on their own, so that a browser's work does not slow the timing-sensitive
// tests there. What they exercise in the server is counted by the other run's coverage.
export default defineConfig({
  plugins: [builtShapeValidators],
  test: {
    include: ['test/console/**/*.test.ts'],
    // Enables the PostgreSQL half when TEST_DATABASE_URL is set (and fails under CI when it is not).
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 3,
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/console-test-results.json' },
  },
})
