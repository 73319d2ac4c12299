import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/contract-coverage.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests that start real server processes compete for two cores; a few files at once is enough.
    maxWorkers: 2,
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.d.ts'],
      reporter: ['text-summary', 'json-summary'],
      // The floor only ever rises: raise it when coverage grows, never lower it.
      thresholds: { lines: 85, functions: 85, branches: 75, statements: 85 },
    },
  },
})
