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

/**
 * The URL with `schema` first on its search path (libpq's `options`, kept if it has some): the
 * service then keeps its tables in that schema, which must exist.
 */
export function inSchema(url: string, schema: string): string {
  const next = new URL(url)
  const options = next.searchParams.get('options')
  next.searchParams.set('options', `${options === null ? '' : `${options} `}-c search_path=${schema}`)
  return next.toString()
}
