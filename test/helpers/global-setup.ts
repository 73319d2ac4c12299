import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { admin, dropDatabases, runPrefix, TEST_DATABASE_URL } from './postgres.js'

const SKIPPED =
  'PostgreSQL suite SKIPPED: TEST_DATABASE_URL is not set, so only SQLite was tested ' +
  '(e.g. TEST_DATABASE_URL=postgres://plantstore:plantstore@127.0.0.1:5432/plantstore npm test)'

/**
 * Gives the run one directory for every test's files and removes it when the run ends: databases,
 * token files and logs of a thousand tests would otherwise stay behind in the system's temp
 * directory after each run.
 */
export default async function setup(): Promise<() => Promise<void>> {
  // Worker processes inherit the environment, so every test file of this run sees the same directory.
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-tests-'))
  // mkdtemp makes it the owner's alone; tests that run a command as another user must enter it.
  chmodSync(dir, 0o755)
  process.env.PLANTSTORE_TEST_TMP = dir
  const removeFiles = () => rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  try {
    const endPostgresSuite = await postgresSuite()
    return async () => {
      try {
        await endPostgresSuite()
      } finally {
        removeFiles()
      }
    }
  } catch (error) {
    removeFiles()
    throw error
  }
}

/**
 * Decides once per run whether the PostgreSQL suite runs. Without TEST_DATABASE_URL it is skipped,
 * loudly, except under CI=true where a missing database fails the run instead of passing quietly.
 * Returns what ends it: drops the run's databases, or repeats that it was skipped.
 */
async function postgresSuite(): Promise<() => Promise<void>> {
  const url = TEST_DATABASE_URL
  if (!url) {
    if (process.env.CI === 'true') {
      throw new Error('CI=true but TEST_DATABASE_URL is not set: the PostgreSQL suite must run in CI')
    }
    process.stderr.write(`\n  ${SKIPPED}\n\n`)
    return async () => {
      process.stderr.write(`\n  ${SKIPPED}\n`)
    }
  }
  await admin(url, (c) => c.query('SELECT 1')).catch((error: Error) => {
    throw new Error(`TEST_DATABASE_URL is set but the server does not answer: ${error.message}`)
  })
  // Every fresh database of this run carries this id.
  process.env.PLANTSTORE_TEST_RUN = randomBytes(4).toString('hex')
  const prefix = runPrefix()
  process.stderr.write(`\n  PostgreSQL suite enabled (databases ${prefix}*)\n\n`)
  return async () => {
    await dropDatabases(url, prefix)
  }
}
