import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { migrate } from '../../src/store/sqlite/migrate.js'

// In process, where coverage sees it, what test/process/cli.test.ts checks through the real CLI: a run of
// migrations the database refuses midway is undone whole, and the failure names the migration.
describe('SQLite migrations that fail midway', () => {
  const steps = [
    { version: 1, name: '001_first', sql: 'CREATE TABLE first (x INTEGER)' },
    { version: 2, name: '002_second', sql: 'CREATE TABLE second (x INTEGER)' },
    { version: 3, name: '003_broken', sql: 'CREATE TABLE first (y INTEGER)' },
  ]
  const tables = (db: Database.Database) =>
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all()

  it('undoes the whole run and names the migration with the version left', () => {
    const db = new Database(':memory:')
    migrate(db, steps.slice(0, 1))
    let thrown: unknown
    try {
      migrate(db, steps)
    } catch (error) {
      thrown = error
    }
    expect((thrown as Error).message).toBe(
      'cannot apply migration 003_broken (table first already exists): the database was left as it was, at schema version 1',
    )
    expect((thrown as { code?: unknown }).code).toBe('SQLITE_ERROR')
    expect(tables(db)).toEqual(['first', 'schema_migrations'])
    db.close()
  })

  it('says version 0 when nothing had been applied', () => {
    const db = new Database(':memory:')
    expect(() =>
      migrate(db, [steps[0] as (typeof steps)[0], { ...(steps[2] as (typeof steps)[0]), version: 2 }]),
    ).toThrow(/: the database was left as it was, at schema version 0$/)
    expect(tables(db)).toEqual([])
    db.close()
  })

  it('lets any other failure through as it is', () => {
    const db = new Database(':memory:')
    const tooBig = { version: 1, name: '001_big', sql: 'SELECT zeroblob(2000000000)' }
    let thrown: unknown
    try {
      migrate(db, [tooBig])
    } catch (error) {
      thrown = error
    }
    expect((thrown as { code?: unknown }).code).not.toBe('SQLITE_ERROR')
    expect((thrown as Error).message).not.toContain('cannot apply migration')
    db.close()
  })
})
