import { createHash, hash } from 'node:crypto'
import { AppError, errors } from '../errors.js'
import type { ListPosition, PlantFilter } from '../store/types.js'
import { foldName } from './fold.js'
import { parseInt64 } from './int64.js'
import { NAME_MAX_LENGTH } from './model.js'
import { CURSOR_RULE, measureText, type SortText } from './validate.js'

// The cursor of a listing's next page: where the page ended (the last plant's exact sort key and
// id) and which listing it belongs to (the sort and a digest of the folded filter), as base64url of
// a checksum followed by a small JSON text. The checksum turns a cursor that was cut short or edited
// into a 400 rather than a page that starts somewhere else; one written with a recomputed checksum
// still only names a place to start, bound to the database as a parameter, and is read as strictly
// here as any other.

const VERSION = 1
/** Bytes of SHA-256 the cursor carries before its JSON text. */
const CHECKSUM_BYTES = 12

interface CursorBody {
  /** The format's version. */
  v: number
  /** The sort, as the query named it. */
  s: SortText
  /** The digest of the filter (filterDigest). */
  f: string
  /** The last plant's id, in decimal. */
  i: string
  /** The last plant's sort key; absent for the id order. */
  k?: string
}

const malformed = () =>
  new AppError(errors.QUERY_INVALID, `The query parameter cursor must be ${CURSOR_RULE}.`)

const otherQuery = () =>
  new AppError(
    errors.QUERY_INVALID,
    'The query parameter cursor belongs to another listing: send it with the sort, q and tag of the request whose `Link` header gave it.',
  )

/**
 * Which plants a filter keeps, as a short text: the same for every spelling of one filter (the tags
 * in any order or repeated, the text as folded), different for any other.
 */
export function filterDigest(filter: PlantFilter): string {
  const tags = [...new Set(filter.tags ?? [])].sort()
  const text = filter.text === undefined ? null : foldName(filter.text)
  return hash('sha256', JSON.stringify([text, tags]), 'base64url').slice(0, 16)
}

function checksum(text: Buffer): Buffer {
  return createHash('sha256').update(text).digest().subarray(0, CHECKSUM_BYTES)
}

/** The cursor of the page that starts after `position`, in the listing of `sort` and `filter`. */
export function encodeCursor(sort: SortText, filter: PlantFilter, position: ListPosition): string {
  const body: CursorBody = { v: VERSION, s: sort, f: filterDigest(filter), i: position.id.toString() }
  if (position.key !== undefined) body.k = position.key
  const text = Buffer.from(JSON.stringify(body))
  return Buffer.concat([checksum(text), text]).toString('base64url')
}

/** The sort key a cursor may carry for `sort`: what the store gave for that order, and nothing else. */
function keyFits(sort: SortText, key: unknown): boolean {
  const field = sort.replace(/^-/, '')
  if (field === 'id') return key === undefined
  if (typeof key !== 'string') return false
  if (field === 'name') {
    const length = measureText(key)
    return length >= 1 && length <= NAME_MAX_LENGTH
  }
  // An instant as an integer count since the epoch (see ListedPlant).
  return parseInt64(key) !== null
}

/** The JSON a cursor carries, when its checksum holds; undefined for anything else. */
function bodyOf(cursor: string): Record<string, unknown> | undefined {
  const bytes = Buffer.from(cursor, 'base64url')
  // Only the one spelling the encoder writes: trailing bits or padding would make another cursor.
  if (bytes.length <= CHECKSUM_BYTES || bytes.toString('base64url') !== cursor) return undefined
  const text = bytes.subarray(CHECKSUM_BYTES)
  if (!checksum(text).equals(bytes.subarray(0, CHECKSUM_BYTES))) return undefined
  try {
    const body: unknown = JSON.parse(text.toString('utf8'))
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Where the page `cursor` names starts, for a listing of `sort` and `filter`. A cursor that is not
 * one this service wrote, or that was edited, is 400; so is one written for another sort or filter,
 * whose position would mean nothing in this order.
 */
export function decodeCursor(cursor: string, sort: SortText, filter: PlantFilter): ListPosition {
  const body = bodyOf(cursor)
  if (body === undefined || body.v !== VERSION || typeof body.s !== 'string' || typeof body.i !== 'string')
    throw malformed()
  const id = parseInt64(body.i)
  if (id === null) throw malformed()
  if (body.s !== sort || body.f !== filterDigest(filter)) throw otherQuery()
  if (!keyFits(sort, body.k)) throw malformed()
  return body.k === undefined ? { id } : { id, key: body.k as string }
}
