import { AppError, errors } from '../errors.js'
import type { PlantEventType } from '../plants/events.js'
import type { EventStore } from '../store/types.js'
import { changeJson, cursorOf } from './change.js'
import { seqOfParameter } from './query.js'

export interface FeedQuery {
  /** Changes after this cursor; from the oldest change kept when absent. */
  after?: string
  limit: number
  /** Only changes of these types; every type when absent. */
  type?: readonly PlantEventType[]
}

/**
 * A page of the change feed, in commit order, as the response's JSON text `{data, next}`: the
 * changes as changeJson writes them (plants as stored, ids exact) and the cursor to read on from,
 * there even when no change follows yet.
 */
export async function readFeed(events: EventStore, query: FeedQuery): Promise<string> {
  const afterSeq = query.after === undefined ? 0 : seqOfParameter('after', query.after)
  const types = query.type === undefined ? undefined : [...new Set(query.type)]
  const page = await events.changes({ afterSeq, limit: query.limit, types })
  // Asked after the read: a sweep that deleted changes this page should have held has recorded its
  // horizon by the time the read could miss them.
  if (query.after !== undefined && afterSeq < (await events.retentionHorizon())) {
    throw new AppError(errors.CURSOR_EXPIRED)
  }
  return `{"data":[${page.changes.map(changeJson).join(',')}],"next":"${cursorOf(page.lastSeq)}"}`
}
