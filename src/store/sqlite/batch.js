// One group-commit batch written in one transaction. Plain JavaScript (with batch.d.ts beside it)
// because the writer thread loads it too, and a worker thread can only start from a .js file.

const UNIQUE_VIOLATIONS = new Set(['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_CONSTRAINT_UNIQUE'])

/** Prepares the statements once; the returned function writes one batch and returns its outcomes. */
export function prepareBatchWriter(db) {
  const insert = db.prepare(
    'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  )
  const insertEvent = db.prepare('INSERT INTO events (id, type, payload, created_at) VALUES (?, ?, ?, ?)')
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')

  return function writeBatch(batch, now) {
    const outcomes = []
    begin.run()
    try {
      for (const row of batch) {
        try {
          insert.run(row.id, row.name, row.tag, now, now)
        } catch (error) {
          // A duplicate fails only its own request: SQLite undoes just that statement.
          if (!UNIQUE_VIOLATIONS.has(error?.code)) throw error
          outcomes.push('exists')
          continue
        }
        if (row.event) insertEvent.run(row.event.id, row.event.type, row.event.payload, row.event.createdAt)
        outcomes.push('created')
      }
      commit.run()
    } catch (error) {
      if (db.inTransaction) rollback.run()
      throw error
    }
    return outcomes
  }
}
