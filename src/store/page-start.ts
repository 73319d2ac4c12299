import { INT64_MAX, INT64_MIN } from '../plants/int64.js'

/**
 * The smallest id the page after the cursor `after` may hold; undefined when no id can follow it.
 * Both stores read a page as `id >= start` rather than `id > after`: with no cursor the page starts
 * at the smallest int64.
 */
export function pageStart(after: bigint | undefined): bigint | undefined {
  if (after === INT64_MAX) return undefined
  return after === undefined ? INT64_MIN : after + 1n
}
