import type { Actor, ChangeRecord } from '../store/types.js'

/**
 * A change's cursor: its place in commit order. It is opaque to clients (the docs promise nothing of
 * its form), and the same value serves as a feed's `after`, a change's `cursor`, a page's `next` and
 * an SSE `id:` / `Last-Event-ID`. It is the seq in decimal, so it sorts and reads back exactly.
 */
export function cursorOf(seq: number): string {
  return String(seq)
}

const CURSOR = /^(?:0|[1-9][0-9]{0,15})$/

/** The seq a cursor names; undefined when the text is no cursor this service gives out. */
export function seqOfCursor(text: string): number | undefined {
  if (!CURSOR.test(text)) return undefined
  const seq = Number(text)
  return Number.isSafeInteger(seq) ? seq : undefined
}

function actorJson(actor: Actor | null): string {
  return actor === null ? 'null' : JSON.stringify(actor)
}

/**
 * A change as one JSON object, the same in the feed, a plant's history and the stream:
 * `{cursor, type, time, actor, requestId, before, after}`. The plants are stored JSON text, copied in
 * as they are so their ids stay exact.
 */
export function changeJson(change: ChangeRecord): string {
  return (
    `{"cursor":"${cursorOf(change.seq)}","type":${JSON.stringify(change.type)},` +
    `"time":"${change.time.toISOString()}","actor":${actorJson(change.actor)},` +
    `"requestId":${JSON.stringify(change.requestId)},"before":${change.before ?? 'null'},` +
    `"after":${change.after ?? 'null'}}`
  )
}
