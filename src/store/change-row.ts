import { PLANT_EVENT_TYPES } from '../plants/events.js'
import type { Actor, ChangePage, ChangeQuery, ChangeRecord } from './types.js'

/** The event types the change feed and a plant's history hold: a plant's changes, never a webhook's test message. */
export const CHANGE_TYPES: readonly string[] = PLANT_EVENT_TYPES

/** A plant change's outbox row as both stores read it back (the time already a Date). */
export interface ChangeRow {
  seq: number
  type: string
  created_at: Date
  payload: string
  /** The Actor as JSON text; null for a change stored before changes recorded their actor. */
  actor: string | null
  request_id: string | null
  /** The plant before an update, as JSON text; null otherwise. */
  before: string | null
}

/**
 * How many seqs past its afterSeq one read of the feed looks at. A read filtered by type over a long
 * run of other events would otherwise walk all of them at once (there is no index by type, which
 * would cost every write an entry); it stops here instead, and its page says where it stopped.
 */
export const FEED_SCAN_SEQS = 10_000

/** The highest seq a read of the feed may return, from its afterSeq. */
export function scanEnd(afterSeq: number): number {
  return afterSeq + FEED_SCAN_SEQS
}

/**
 * The page a read of the feed gives, from its changes (at most `limit`, none above scanEnd) and the
 * highest seq handed out that the same read could see: where the next read resumes, and whether
 * that is the newest seq. A read of no change (limit 0) is only asking where the feed stands.
 */
export function pageOf(changes: ChangeRecord[], query: ChangeQuery, top: number): ChangePage {
  const last = changes.at(-1)
  if (last !== undefined && changes.length >= query.limit)
    return { changes, lastSeq: last.seq, reachedEnd: false }
  const end = query.limit === 0 ? top : scanEnd(query.afterSeq)
  if (top > end) return { changes, lastSeq: end, reachedEnd: false }
  return { changes, lastSeq: Math.max(query.afterSeq, top), reachedEnd: true }
}

const DATA = '"data":'

/**
 * The `data` of an event's envelope `{"type","timestamp","data":…}` as the text it was written, so that
 * its ids stay exact (parsing would round them past 2^53). `data` is the envelope's last member, and
 * `"data":` cannot occur before it: the type and timestamp before it hold no quote. Null for a payload
 * of another form, which then shows no plant rather than failing every read of the feed that holds it.
 */
export function payloadData(payload: string): string | null {
  const at = payload.indexOf(DATA)
  if (at < 0 || !payload.endsWith('}')) return null
  return payload.slice(at + DATA.length, -1)
}

/**
 * The change a stored row records. A create has no plant before and its event's data after; an
 * update stored the plant before beside its event; a delete's event carries the plant as it was.
 */
export function changeOfRow(row: ChangeRow): ChangeRecord {
  const data = payloadData(row.payload)
  let before: string | null
  let after: string | null
  switch (row.type) {
    case 'plant.created':
      before = null
      after = data
      break
    case 'plant.deleted':
      before = data
      after = null
      break
    default:
      before = row.before
      after = data
  }
  return {
    seq: row.seq,
    type: row.type,
    time: row.created_at,
    actor: row.actor === null ? null : (JSON.parse(row.actor) as Actor),
    requestId: row.request_id,
    before,
    after,
  }
}
