// A PostgreSQL database made ready for a benchmark run, shared by the create benchmark (run.ts) and
// the webhook one (webhooks.ts): each setup gets a schema of its own in the database given, as empty
// as a fresh SQLite file, and the tables already there are left as they are.
import { execFileSync } from 'node:child_process'
import pg from 'pg'
import { BIN } from './paths.js'

/** One setup's schema, its tables migrated. */
export interface BenchSchema {
  /** The database's URL with the schema first on its search path. */
  url: string
  /** Connected through `url`, for what the caller stores there first. */
  client: pg.Client
  /** Drops the schema and all it holds, and ends the client. */
  drop(): Promise<void>
}

let made = 0

/**
 * Creates a schema named for this process (`plantstore_bench_PID_N`, N counting its schemas) and
 * migrates it. A run that is killed leaves its schemas behind, to be dropped by that name.
 */
export async function benchSchema(databaseUrl: string): Promise<BenchSchema> {
  const schema = await emptySchema(databaseUrl)
  try {
    execFileSync(BIN, ['migrate', '--database-url', schema.url], { stdio: 'ignore' })
  } catch (error) {
    await schema.drop().catch(() => {})
    throw error
  }
  return schema
}

/**
 * A schema of its own, named as benchSchema names them, with nothing in it: for a server that makes
 * its own tables (bench/reference-pg.mjs).
 */
export async function emptySchema(databaseUrl: string): Promise<BenchSchema> {
  made += 1
  const schema = `plantstore_bench_${process.pid}_${made}`
  const url = inSchema(databaseUrl, schema)
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const drop = async () => {
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    } finally {
      await client.end()
    }
  }
  try {
    // Search's trigram index needs pg_trgm, made here outside every setup's schema: one made in a
    // setup's schema would be dropped with it, and with it the index of each other setup using it.
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public')
    await client.query(`CREATE SCHEMA ${schema}`)
  } catch (error) {
    await drop().catch(() => {})
    throw error
  }
  return { url, client, drop }
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
