import type { Database, Statement } from 'better-sqlite3'
import type { StreamTicketStore } from '../types.js'
import { retryWhileBusy } from './busy.js'

/** The key stream tickets are signed with: one row, written by the first process that needs it. */
export class SqliteStreamTicketStore implements StreamTicketStore {
  private readonly insert: Statement
  private readonly select: Statement

  constructor(private readonly db: Database) {
    this.insert = db.prepare(
      'INSERT INTO stream_ticket_key (id, secret) VALUES (1, ?) ON CONFLICT (id) DO NOTHING',
    )
    this.select = db.prepare('SELECT secret FROM stream_ticket_key WHERE id = 1').pluck()
  }

  async key(candidate: Buffer): Promise<Buffer> {
    const kept = this.db.transaction(() => {
      this.insert.run(candidate)
      return this.select.get() as Buffer
    })
    return retryWhileBusy(() => kept.immediate())
  }
}
