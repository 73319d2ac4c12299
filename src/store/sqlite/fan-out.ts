// The SQL that turns outbox events into webhook deliveries, shared by the dispatcher's queue
// (webhooks.ts), the create batch writer (batch.ts) and the plant store's other writes.
import type { Database } from 'better-sqlite3'
import type { OutboxEvent } from '../types.js'

/**
 * The id of the delivery of event `seq` to the subscription numbered `number` (SQL expressions):
 * `dlv_`, the seq in 14 hex digits, the number in 10. One delivery exists per (subscription, event),
 * and no two subscriptions share a number, so no two deliveries share an id; and new ids ascend, so
 * each lands beside the last in the id index rather than on a random page. Both fields hold more than
 * a database will (2^56 events, 2^40 subscriptions). Older deliveries may hold random ids of the same
 * shape.
 */
export function deliveryId(seq: string, number: string): string {
  return `printf('dlv_%014x%010x', ${seq}, ${number})`
}

/**
 * The id of the event `e` (the Standard Webhooks `webhook-id`), an SQL expression: the one it was
 * stored with (events written before migration 016, and test messages), or else `msg_`, its time in
 * 12 hex digits and its seq in 14. A seq is never handed out twice, so no two events of a database
 * share an id, and the time keeps an event of a restored backup apart from the one sent earlier under
 * its seq. Derived rather than stored, an event costs its create no unique index of random text.
 */
export function eventIdSql(e: string): string {
  return `coalesce(${e}.id, printf('msg_%012x%014x', ${e}.created_at, ${e}.seq))`
}

// Event types are stored space separated; a type matches when it is one of the words.
export const TYPE_MATCHES = "instr(' ' || w.events || ' ', ' ' || e.type || ' ') > 0"

/**
 * One delivery per (enabled subscription, matching event) for the events with seq in [@from, @to],
 * due at once and dated with its event: it exists from the commit that wrote the event. CROSS JOIN
 * keeps the subscriptions as the outer loop: with none, the statement reads one empty page and no
 * event.
 */
export const FAN_OUT_RANGE = `INSERT OR IGNORE INTO webhook_deliveries
    (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
  SELECT ${deliveryId('e.seq', 'w.number')}, w.id, e.seq, 'pending', 0, e.created_at, e.created_at
  FROM webhooks w CROSS JOIN events e
  WHERE w.disabled_at IS NULL AND e.seq BETWEEN @from AND @to AND w.after_seq < e.seq AND ${TYPE_MATCHES}`

/**
 * An outbox event as it is stored: its time in epoch milliseconds; no id, unless it was given one; a
 * plant's change with its facts (ChangeFacts), the actor as JSON text.
 */
export interface OutboxRow {
  id: string | null
  type: string
  payload: string
  createdAt: number
  traceparent: string | null
  plantId: bigint | null
  actor: string | null
  requestId: string | null
  before: string | null
}

export function outboxRow(event: OutboxEvent): OutboxRow {
  const change = event.change
  return {
    id: event.id ?? null,
    type: event.type,
    payload: event.payload,
    createdAt: event.occurredAt.getTime(),
    traceparent: event.traceparent ?? null,
    plantId: change?.plantId ?? null,
    actor: change ? JSON.stringify(change.actor) : null,
    requestId: change?.requestId ?? null,
    before: change?.before ?? null,
  }
}

export interface Outbox {
  /** Stores the event as fanned out at `at`; returns its seq. */
  write(event: OutboxRow, at: number): number
  /** Creates the deliveries of the events with seq in [from, to], in the open transaction; returns how many. */
  fanOut(from: number, to: number): number
}

/**
 * Writes outbox events already fanned out: each event is stored with `fanned_out_at` set, and
 * `fanOut` (called before the transaction commits) creates its deliveries in the same transaction.
 * The dispatcher then only claims and sends; it never rewrites an event row, whose page (and the
 * writer's page cache) another connection would otherwise dirty once more per event.
 */
export function prepareOutbox(db: Database): Outbox {
  // One row under its integer key; its id is made from that key when read (eventIdSql). A change's
  // facts ride in the same row, which adds one entry to the plant's history index and nothing else.
  const insert = db.prepare(
    `INSERT INTO events (type, payload, created_at, fanned_out_at, traceparent, id, plant_id, actor, request_id, before)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
  const fanOut = db.prepare(FAN_OUT_RANGE)
  return {
    write(event, at) {
      return Number(
        insert.run(
          event.type,
          event.payload,
          event.createdAt,
          at,
          event.traceparent,
          event.id,
          event.plantId,
          event.actor,
          event.requestId,
          event.before,
        ).lastInsertRowid,
      )
    },
    fanOut(from, to) {
      return fanOut.run({ from, to }).changes
    },
  }
}
