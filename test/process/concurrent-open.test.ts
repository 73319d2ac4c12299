import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { loadMigrations } from '../../src/store/sqlite/migrate.js'
import { ROOT } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

const run = promisify(execFile)

// A server starting beside a `token create`, or any two commands run at once on a database not made
// yet: each process switches the new file to WAL. SQLite refused about one process in eleven at once
// with "database is locked" (no wait on its busy handler), and the command failed.
describe('processes opening one new SQLite database at once', () => {
  it('all open it, and leave it in WAL mode with every migration applied', async () => {
    const folder = tempDir()
    const outcomes: string[] = []
    // Twelve rounds of four processes, each round on a new file, all four opening at the same instant.
    for (let round = 0; round < 12; round++) {
      const path = join(folder, `race-${round}.db`)
      const at = Date.now() + 700
      const opened = await Promise.all(
        Array.from({ length: 4 }, () =>
          run(process.execPath, [join(ROOT, 'test/helpers/open-at.mjs'), path, String(at)], {
            timeout: 20_000,
          }),
        ),
      )
      outcomes.push(...opened.map(({ stdout }) => stdout.trim()))
      const db = new Database(path, { readonly: true })
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
        const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()
        expect(versions).toEqual(loadMigrations().map((m) => m.version))
      } finally {
        db.close()
      }
    }
    expect(outcomes).toEqual(Array(48).fill('opened'))
  }, 60_000)
})
