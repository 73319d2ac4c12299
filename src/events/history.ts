import { pageOf } from '../page.js'
import type { EventStore } from '../store/types.js'
import { changeJson, cursorOf } from './change.js'
import { seqOfParameter } from './query.js'

export interface HistoryQuery {
  limit: number
  /** Changes older than this cursor (the `Link` of the previous page gives it). */
  before?: string
}

/**
 * A page of one plant's changes, newest first, as the response's JSON text `{data}`, and the cursor
 * of the next (older) page when one may follow. The history outlives the plant: it is read from the
 * changes kept, whether the plant exists or not, so an id with none kept has an empty history.
 */
export async function plantHistory(
  events: EventStore,
  plantId: bigint,
  query: HistoryQuery,
): Promise<{ json: string; next: string | undefined }> {
  const beforeSeq = query.before === undefined ? undefined : seqOfParameter('before', query.before)
  const rows = await events.history(plantId, query.limit + 1, beforeSeq)
  const page = pageOf(rows, query.limit, (change) => cursorOf(change.seq))
  return { json: `{"data":[${page.rows.map(changeJson).join(',')}]}`, next: page.next }
}
