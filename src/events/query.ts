import { AppError, errors } from '../errors.js'
import { seqOfCursor } from './change.js'

/** The feed's page size: its default and its largest. */
export const FEED_LIMIT_DEFAULT = 100
export const FEED_LIMIT_MAX = 1000

/** A plant history's page size, as the other listings page theirs. */
export const HISTORY_LIMIT_DEFAULT = 50
export const HISTORY_LIMIT_MAX = 500

/** What a query parameter that should hold a change's cursor is refused with when it holds none. */
export function notACursor(parameter: string): string {
  return `The query parameter ${parameter} must be a cursor this service gave out (a change's cursor or a page's next).`
}

/** The seq a cursor given in the query names; a 400 naming the parameter when it names none. */
export function seqOfParameter(parameter: string, text: string): number {
  const seq = seqOfCursor(text)
  if (seq === undefined) throw new AppError(errors.CURSOR_INVALID, notACursor(parameter))
  return seq
}
