import type { Pool } from 'pg'
import { AppendSignal } from '../append-signal.js'
import { CHANGE_TYPES, type ChangeRow, changeOfRow, pageOf, scanEnd } from '../change-row.js'
import type { ChangePage, ChangeQuery, ChangeRecord, EventStore, OutboxEvent } from '../types.js'
import { ChangeWatch, type Listening } from './change-watch.js'
import { guarded } from './errors.js'
import { eventIdSql } from './fan-out.js'
import type { EventsWritten } from './plants.js'

interface EventRow {
  seq: string
  id: string
  type: string
  payload: string
  created_at: Date
}

export class PostgresEventStore extends AppendSignal implements EventStore {
  private readonly changeWatch: ChangeWatch

  constructor(
    private readonly pool: Pool,
    listening: Listening,
  ) {
    super()
    this.changeWatch = new ChangeWatch(listening)
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

  /**
   * The page and the highest seq stored, in one statement and so one snapshot: every event at or
   * below that seq has committed (seq order is commit order, see outbox-lock.ts), and a page that is
   * not full has every change up to it.
   */
  async changes(query: ChangeQuery): Promise<ChangePage> {
    const types = query.types?.filter((type) => CHANGE_TYPES.includes(type)) ?? CHANGE_TYPES
    const result = await guarded(() =>
      this.pool.query<PageRow>(
        `SELECT (SELECT max(seq) FROM events)::text AS top, p.*
         FROM (VALUES (1)) AS one(x) LEFT JOIN (
           SELECT ${CHANGE_COLUMNS} FROM events
           WHERE seq > $1 AND seq <= $4 AND type = ANY($3::text[]) ORDER BY seq LIMIT $2
         ) p ON true
         ORDER BY p.seq`,
        [query.afterSeq, query.limit, types, scanEnd(query.afterSeq)],
      ),
    )
    // With no change to show, the one row carries only the highest seq.
    const changes = result.rows.flatMap((row) => (row.seq === null ? [] : [toChange(row)]))
    return pageOf(changes, query, Number(result.rows[0]?.top ?? 0))
  }

  async history(plantId: bigint, limit: number, beforeSeq?: number): Promise<ChangeRecord[]> {
    const result = await guarded(() =>
      beforeSeq === undefined
        ? this.pool.query<SeqRow>(
            `SELECT ${CHANGE_COLUMNS} FROM events WHERE plant_id = $1 ORDER BY seq DESC LIMIT $2`,
            [plantId.toString(), limit],
          )
        : this.pool.query<SeqRow>(
            `SELECT ${CHANGE_COLUMNS} FROM events WHERE plant_id = $1 AND seq < $3 ORDER BY seq DESC LIMIT $2`,
            [plantId.toString(), limit, beforeSeq],
          ),
    )
    return result.rows.map(toChange)
  }

  async retentionHorizon(): Promise<number> {
    const result = await guarded(() =>
      this.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM retention_horizon'),
    )
    return Number(result.rows[0]?.seq ?? 0)
  }

  watchChanges(listener: () => void): () => void {
    return this.changeWatch.watch(listener)
  }

  /** Called by the plant store after every commit that wrote events. */
  committed(written: EventsWritten): void {
    if (written.queued) this.appended()
    if (written.changed) this.changeWatch.ring()
  }
}

/**
 * A change's columns. node-postgres gives the bigint seq as text; a cast in SQL would be wrong here:
 * `ORDER BY seq` would then sort by the text.
 */
const CHANGE_COLUMNS = 'seq, type, created_at, payload, actor, request_id, before'

type SeqRow = Omit<ChangeRow, 'seq'> & { seq: string }

/** A row of a page of changes: a change's columns (all null when there is none) and the highest seq. */
type PageRow = SeqRow & { top: string | null }

function toChange(row: SeqRow): ChangeRecord {
  return changeOfRow({ ...row, seq: Number(row.seq) })
}
