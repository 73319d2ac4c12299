import { configDefaults, defineConfig } from 'vitest/config'
import { builtShapeValidators } from './test/setup/built-shape-validators.js'
import { SlowFirstSequencer } from './test/setup/slow-first.js'

export default defineConfig({
  plugins: [builtShapeValidators],
  test: {
    include: ['test/**/*.test.ts', 'bench/**/*.test.ts'],
    // The console's browser tests run after these, on their own (vitest.console.config.ts): Chromium
    // beside the timing-sensitive tests here would slow them past their bounds.
    exclude: [...configDefaults.exclude, 'test/console/**'],
    // Enables the PostgreSQL suite when TEST_DATABASE_URL is set (and says loudly when it is not);
    // checks that the tests exercise every documented operation; with coverage on, empties the
    // directory the processes the tests start write their coverage to.
    globalSetup: [
      'test/helpers/global-setup.ts',
      'test/setup/contract-coverage.ts',
      'test/setup/child-coverage.ts',
    ],
    // With coverage on, has the processes each test starts write it there.
    setupFiles: ['test/setup/child-coverage-env.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files spend their time waiting on processes they started (servers, CLI commands), not on
    // the CPU: three at once keep two cores busy without starving the timing-sensitive ones.
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
    // The JSON report lets CI print a one-line tally after the run.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/test-results.json' },
    coverage: {
      // Vitest's V8 provider, counting the spawned server and CLI processes' coverage too.
      provider: 'custom',
      customProviderModule: 'test/setup/coverage-provider.ts',
      include: ['src/**/*.ts'],
      // Without a PostgreSQL server its store cannot run, so it is measured only when the suite runs.
      // The console runs in the browser: its tests drive it there (test/console).
      exclude: [
        'src/**/*.d.ts',
        'src/console/**',
        ...(process.env.TEST_DATABASE_URL ? [] : ['src/store/postgres/**']),
      ],
      reporter: ['text-summary', 'json-summary', 'json'],
      // A failing run still says how much it covered, so a floor missed is seen beside the failure.
      reportOnFailure: true,
      // The floor only ever rises: raise it when coverage grows, never lower it. It counts the code
      // run inside the server and CLI processes the tests start as well as in the tests' own. A run
      // without PostgreSQL leaves the code only it runs outside src/store/postgres (the opener's and
      // the commands' PostgreSQL branches) unrun, and so has floors of its own.
      thresholds: process.env.TEST_DATABASE_URL
        ? { lines: 98.9, functions: 97.1, branches: 93.2, statements: 97.55 }
        : { lines: 98.5, functions: 96.8, branches: 93.1, statements: 97.0 },
    },
  },
})
