// A PostgreSQL database made ready for a benchmark run, shared by the create benchmark (run.ts) and
// the webhook one (webhooks.ts): a database that outlives the run starts each one as empty as a fresh
// SQLite file.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const BIN = fileURLToPath(new URL('../bin/plantstore', import.meta.url))

/**
 * Migrates the database, empties `tables` and returns a connected client for what the caller does
 * next (it ends it). A table others refer to is emptied only with them, so list those too.
 */
export async function emptiedPostgres(url: string, tables: readonly string[]): Promise<pg.Client> {
  execFileSync(BIN, ['migrate', '--database-url', url], { stdio: 'ignore' })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`TRUNCATE ${tables.join(', ')}`)
  } catch (error) {
    await client.end()
    throw error
  }
  return client
}
