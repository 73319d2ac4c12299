import pg, { type ClientBase, type ClientConfig } from 'pg'
import { type Migration, migrationFailed, readMigrations, refuseNewerSchema } from '../migration-files.js'
import { BACKFILLS } from './backfills.js'

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url)

// Any fixed pair works; it only has to be the same in every instance and unused by anything else.
const MIGRATION_LOCK = [0x706c_616e, 1] as const

export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return readMigrations(dir)
}

/**
 * Applies the migrations the database lacks in one transaction under an advisory lock, on a
 * connection of its own (`client`). Instances that start together queue on the lock; each later one
 * then finds every version recorded and does nothing, so N instances on an empty database end with
 * one schema and no error.
 */
export async function migrate(
  client: ClientBase,
  migrations: Migration[] = loadMigrations(),
): Promise<Migration[]> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const done = await client.query<{ version: number }>('SELECT version FROM schema_migrations')
    const applied = new Set(done.rows.map((r) => r.version))
    refuseNewerSchema(applied, migrations)
    const pending = migrations.filter((m) => !applied.has(m.version))
    for (const m of pending) {
      await apply(client, m).catch((error: unknown) => {
        // Class 42 is the SQL refused (an object already there, a privilege lacking); a lost
        // connection or a read-only server keeps its own message and code.
        if (!String((error as { code?: unknown }).code).startsWith('42')) throw error
        throw migrationFailed(m, applied, error as Error)
      })
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name])
    }
    await client.query('COMMIT')
    return pending
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}

/** A line of a migration's file that stands for a step of BACKFILLS, run where it stands. */
const BACKFILL_LINE = /^-- backfill: (\S+)[ \t]*$/m

/** Runs the migration's SQL, and the backfills it names, in the order they are written. */
async function apply(client: ClientBase, migration: Migration): Promise<void> {
  const parts = migration.sql.split(BACKFILL_LINE)
  for (const [i, part] of parts.entries()) {
    if (i % 2 === 0) {
      if (part.trim() !== '') await client.query(part)
      continue
    }
    const backfill = BACKFILLS[part]
    if (backfill === undefined) throw new Error(`migration ${migration.name} names no known backfill ${part}`)
    await backfill(client)
  }
}

/**
 * Migrates on a connection opened for it without the per-query timeouts of `connection`: a migration
 * may rightly take longer than any request should (an index built over a large table, a lock it waits
 * for), and so may waiting on the lock for another instance's. Under those timeouts the first would be
 * cancelled on every start, and the second fail as "unreachable". Only connecting stays bounded.
 */
export async function migrateDatabase(connection: ClientConfig): Promise<Migration[]> {
  const { query_timeout: _query, statement_timeout: _statement, ...untimed } = connection
  const client = new pg.Client(untimed)
  // A broken connection also fails the query under way, which reports it.
  client.on('error', () => {})
  try {
    await client.connect()
    return await migrate(client)
  } finally {
    await client.end().catch(() => {})
  }
}
