import { randomBytes } from 'node:crypto'
import { admin, dropDatabases, runPrefix, TEST_DATABASE_URL } from './postgres.js'

const SKIPPED =
  'PostgreSQL suite SKIPPED: TEST_DATABASE_URL is not set, so only SQLite was tested ' +
  '(e.g. TEST_DATABASE_URL=postgres://plantstore:plantstore@127.0.0.1:5432/plantstore npm test)'

/**
 * Decides once per run whether the PostgreSQL suite runs. Without TEST_DATABASE_URL it is skipped,
 * loudly, except under CI=true where a missing database fails the run instead of passing quietly.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
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
  // Worker processes inherit the environment, so every fresh database of this run carries this id.
  process.env.PLANTSTORE_TEST_RUN = randomBytes(4).toString('hex')
  const prefix = runPrefix()
  process.stderr.write(`\n  PostgreSQL suite enabled (databases ${prefix}*)\n\n`)
  return async () => {
    await dropDatabases(url, prefix)
  }
}
