import type { Database } from 'better-sqlite3'
import { foldName } from '../../plants/fold.js'
import { type Migration, migrationFailed, readMigrations, refuseNewerSchema } from '../migration-files.js'

export type { Migration }

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url)

/** Numbered SQL files (`001_init.sql`, …) in version order. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return readMigrations(dir)
}

/**
 * Refuses a file that holds another application's tables: migrating would add this schema beside
 * them and switch the file to WAL, changing a database that was named by mistake. Runs before
 * anything writes.
 */
export function refuseForeignDatabase(db: Database, path: string): void {
  const tables = db
    .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all() as string[]
  if (tables.length === 0 || tables.includes('schema_migrations')) return
  throw new Error(
    `${path} is a SQLite database of another application (tables ${tables.slice(0, 3).join(', ')}${tables.length > 3 ? ', …' : ''}), not a plantstore one: it was left as it was`,
  )
}

/**
 * The migrations the database lacks, found without writing: a command that only reads can then use
 * a database it may not write (a full disk, a file this user may only read) when there are none.
 */
export function pendingMigrations(db: Database, migrations: Migration[] = loadMigrations()): Migration[] {
  const recorded = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    .get()
  const done = new Set(
    recorded === undefined
      ? []
      : db
          .prepare('SELECT version FROM schema_migrations')
          .pluck()
          .all()
          .map((v) => Number(v)),
  )
  refuseNewerSchema(done, migrations)
  return migrations.filter((m) => !done.has(m.version))
}

/**
 * Applies the migrations the database lacks, all in one IMMEDIATE transaction: a second process
 * starting at the same moment waits on the write lock, then finds nothing left to do. Throws
 * SQLITE_READONLY… when the database cannot be written, even with nothing to apply.
 */
export function migrate(db: Database, migrations: Migration[] = loadMigrations()): Migration[] {
  // A migration that folds the names of stored plants (018) calls fold_name(), the application's own
  // foldName: SQLite's lower() folds ASCII letters only.
  db.function('fold_name', { deterministic: true }, (name: unknown) => foldName(String(name)))
  const apply = db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`)
    const done = new Set(
      db
        .prepare('SELECT version FROM schema_migrations')
        .pluck()
        .all()
        .map((v) => Number(v)),
    )
    refuseNewerSchema(done, migrations)
    const pending = migrations.filter((m) => !done.has(m.version))
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
    for (const m of pending) {
      try {
        db.exec(m.sql)
      } catch (error) {
        // SQLITE_ERROR is the SQL refused; a file that cannot be written (SQLITE_READONLY, …) is said
        // by the caller, about the file.
        if ((error as { code?: unknown }).code !== 'SQLITE_ERROR') throw error
        throw migrationFailed(m, done, error as Error)
      }
      record.run(m.version, m.name, Date.now())
    }
    // Foreign keys are off while migrating (below): what a migration left must still hold them.
    const broken = pending.length === 0 ? [] : (db.pragma('foreign_key_check') as Array<{ table: string }>)
    if (broken.length > 0) {
      throw new Error(`migrating left rows of ${broken[0]?.table} without the row they refer to`)
    }
    // SQLite opens a file this user may only read without a word, and with nothing to apply nothing
    // above wrote: try a write, undone at once, so that such a file fails here rather than on every
    // request.
    db.exec(
      'SAVEPOINT write_check; CREATE TABLE write_check (x); ROLLBACK TO write_check; RELEASE write_check',
    )
    return pending
  })
  // A migration that copies a table others refer to (SQLite cannot drop a constraint in place) drops
  // the old one: with foreign keys on, that would delete it row by row and fail on the first row
  // referred to. SQLite ignores this pragma inside a transaction, so it is set around it.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1
  if (foreignKeys) db.pragma('foreign_keys = OFF')
  try {
    return apply.immediate()
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON')
  }
}
