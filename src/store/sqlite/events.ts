import type { Database, Statement } from 'better-sqlite3'
import type { EventStore, OutboxEvent } from '../types.js'

interface EventRow {
  seq: number
  id: string
  type: string
  payload: string
  created_at: number
}

export class SqliteEventStore implements EventStore {
  private readonly since: Statement
  private readonly listeners = new Set<() => void>()

  constructor(db: Database) {
    this.since = db.prepare(
      'SELECT seq, id, type, payload, created_at FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
    )
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Called by the plant store after a commit that queued webhook deliveries. */
  appended(): void {
    for (const listener of this.listeners) listener()
  }

  async listSince(afterSeq: number, limit: number): Promise<Array<OutboxEvent & { seq: number }>> {
    const rows = this.since.all(afterSeq, limit) as EventRow[]
    return rows.map((r) => ({
      seq: r.seq,
      id: r.id,
      type: r.type,
      payload: r.payload,
      occurredAt: new Date(r.created_at),
    }))
  }
}
