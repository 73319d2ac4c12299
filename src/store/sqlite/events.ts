import type { Database, Statement } from 'better-sqlite3'
import { AppendSignal } from '../append-signal.js'
import type { ChangePage, ChangeRecord, EventStore, OutboxEvent } from '../types.js'
import { eventIdSql } from './fan-out.js'

interface EventRow {
  seq: number
  id: string
  type: string
  payload: string
  created_at: number
}

export class SqliteEventStore extends AppendSignal implements EventStore {
  private readonly since: Statement

  constructor(db: Database) {
    super()
    this.since = db.prepare(
      `SELECT e.seq, ${eventIdSql('e')} AS id, e.type, e.payload, e.created_at FROM events e
       WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
    )
  }

  async listSince(
    afterSeq: number,
    limit: number,
  ): Promise<Array<OutboxEvent & { id: string; seq: number }>> {
    const rows = this.since.all(afterSeq, limit) as EventRow[]
    return rows.map((r) => ({
      seq: r.seq,
      id: r.id,
      type: r.type,
      payload: r.payload,
      occurredAt: new Date(r.created_at),
    }))
  }

  // Placeholders until the change feed's reads are written.
  async changes(): Promise<ChangePage> {
    throw new Error('not yet')
  }
  async history(): Promise<ChangeRecord[]> {
    throw new Error('not yet')
  }
  async retentionHorizon(): Promise<number> {
    throw new Error('not yet')
  }
  watchChanges(): () => void {
    throw new Error('not yet')
  }
}
