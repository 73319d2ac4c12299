import type { Pool } from 'pg'
import { AppendSignal } from '../append-signal.js'
import type { ChangePage, ChangeRecord, EventStore, OutboxEvent } from '../types.js'
import { guarded } from './errors.js'
import { eventIdSql } from './fan-out.js'

interface EventRow {
  seq: string
  id: string
  type: string
  payload: string
  created_at: Date
}

export class PostgresEventStore extends AppendSignal implements EventStore {
  constructor(private readonly pool: Pool) {
    super()
  }

  async listSince(
    afterSeq: number,
    limit: number,
  ): Promise<Array<OutboxEvent & { id: string; seq: number }>> {
    const result = await guarded(() =>
      this.pool.query<EventRow>(
        `SELECT e.seq::text AS seq, ${eventIdSql('e')} AS id, e.type, e.payload, e.created_at FROM events e
         WHERE e.seq > $1 ORDER BY e.seq LIMIT $2`,
        [afterSeq, limit],
      ),
    )
    return result.rows.map((r) => ({
      seq: Number(r.seq),
      id: r.id,
      type: r.type,
      payload: r.payload,
      occurredAt: r.created_at,
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
