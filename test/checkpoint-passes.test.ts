import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { PASSES_BEFORE_RESTART, runCheckpoint } from '../src/store/sqlite/checkpoint-passes.js'
import { tempDir, walSalts } from './helpers/stores.js'

const open: Database.Database[] = []
afterEach(() => {
  for (const db of open.splice(0)) db.close()
})

/** A database in WAL mode with `rows` committed rows in its log, and a connection that records its pragmas. */
function logged(rows: number) {
  const path = join(tempDir(), 'c.db')
  const writer = new Database(path)
  open.push(writer)
  writer.pragma('journal_mode = WAL')
  writer.pragma('wal_autocheckpoint = 0')
  writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
  const insert = writer.prepare('INSERT INTO t (v) VALUES (?)')
  for (let i = 0; i < rows; i++) insert.run('x'.repeat(500))
  const db = new Database(path)
  open.push(db)
  db.pragma('busy_timeout = 0')
  const steps: string[] = []
  const recording = {
    pragma: (source: string) => {
      steps.push(source)
      return db.pragma(source)
    },
  }
  const syncDatabase = () => {
    steps.push('fsync')
  }
  const salts = () => walSalts(path)
  return { writer, recording, steps, syncDatabase, salts }
}

describe("the checkpoint thread's sequence", () => {
  it('runs a PASSIVE checkpoint alone, without an fsync of its own', () => {
    const { recording, steps, syncDatabase } = logged(10)
    runCheckpoint(recording, 'PASSIVE', { limitMs: 100, syncDatabase })
    expect(steps).toEqual(['wal_checkpoint(PASSIVE)'])
  })

  it('precedes a RESTART or TRUNCATE with PASSIVE passes each followed by an fsync of the database', () => {
    for (const mode of ['RESTART', 'TRUNCATE'] as const) {
      const { writer, recording, steps, syncDatabase, salts } = logged(200)
      const before = salts()
      runCheckpoint(recording, mode, { limitMs: 1000, syncDatabase })
      const pass = ['wal_checkpoint(PASSIVE)', 'fsync']
      expect(PASSES_BEFORE_RESTART).toBeGreaterThan(1)
      expect(steps).toEqual([
        ...Array.from({ length: PASSES_BEFORE_RESTART }, () => pass).flat(),
        `wal_checkpoint(${mode})`,
      ])
      // The log really was rewound: the next commit writes a new header (TRUNCATE empties the file first).
      writer.prepare('INSERT INTO t (v) VALUES (?)').run('y')
      expect(salts()).not.toBe(before)
    }
  })

  it('gives up quietly, after its time limit, while another connection holds the write lock', () => {
    const { writer, recording, steps, syncDatabase } = logged(10)
    writer.exec('BEGIN IMMEDIATE')
    const started = Date.now()
    runCheckpoint(recording, 'RESTART', { limitMs: 50, syncDatabase })
    expect(Date.now() - started).toBeGreaterThanOrEqual(50)
    expect(steps.filter((s) => s === 'wal_checkpoint(RESTART)').length).toBeGreaterThan(1)
    writer.exec('COMMIT')
  })
})
