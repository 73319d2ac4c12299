import type { Pool } from 'pg'
import { type Migration, readMigrations } from '../migration-files.js'

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url)

// Any fixed pair works; it only has to be the same in every instance and unused by anything else.
const MIGRATION_LOCK = [0x706c_616e, 1] as const

export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return readMigrations(dir)
}

/**
 * Applies the migrations the database lacks in one transaction under an advisory lock. Instances that
 * start together queue on the lock; each later one then finds every version recorded and does
 * nothing, so N instances on an empty database end with one schema and no error.
 */
export async function migrate(pool: Pool, migrations: Migration[] = loadMigrations()): Promise<Migration[]> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
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
      const pending = migrations.filter((m) => !applied.has(m.version))
      for (const m of pending) {
        await client.query(m.sql)
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          m.version,
          m.name,
        ])
      }
      await client.query('COMMIT')
      return pending
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  } catch (error) {
    broken = error as Error
    throw error
  } finally {
    client.release(broken)
  }
}
