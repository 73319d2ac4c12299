import type { PlantOrder, SortField } from '../store/types.js'
import { NAME_MAX_LENGTH } from './model.js'

// What a plant request may hold is said by its schema (src/http/schemas.ts), which is also what checks
// it (src/http/validation.ts). Here: the text rule that schema's `text` format applies, and the
// listing's limits the schema states.

/**
 * Length in code points (so an emoji counts once), or -1 when the text holds a C0 control character
 * or a lone surrogate. PostgreSQL cannot store U+0000 and a lone surrogate has no UTF-8 encoding, so
 * both stores refuse the same inputs; no name is meant to hold a control character anyway. Every
 * stored text field (webhook descriptions and URLs too) is measured here.
 */
/** No C0 control characters, as published; Ajv checks it with the `text` format, which refuses lone surrogates too. */
export const TEXT_PATTERN = '^[^\\u0000-\\u001f]*$'

export function measureText(text: string): number {
  let length = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20) return -1
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = text.charCodeAt(i + 1)
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1
      i++
    }
    length++
  }
  return length
}

export const LIST_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 1000
/** The longest search text, in code points: a name's longest, as the text is a piece of a name. */
export const SEARCH_MAX_LENGTH = NAME_MAX_LENGTH
/** The most `tag` values a listing takes: a URL holding more would near the request line's limit. */
export const LIST_TAGS_MAX = 20

/** What `sort` names: a field, ascending, or with a leading `-`, descending. */
export type SortText = SortField | `-${SortField}`

const SORT_FIELDS: readonly SortField[] = ['id', 'name', 'createdAt', 'updatedAt']
export const SORT_TEXTS: readonly SortText[] = SORT_FIELDS.flatMap((field) => [field, `-${field}` as const])

/** The order a `sort` names. */
export function orderOf(sort: SortText): PlantOrder {
  const descending = sort.startsWith('-')
  return { field: (descending ? sort.slice(1) : sort) as SortField, descending }
}

/**
 * The longest cursor: one holds a name at its longest (800 bytes of UTF-8 at most) and a few dozen
 * bytes more, in base64url.
 */
export const CURSOR_MAX_LENGTH = 2000

/** What a cursor must be, in the words of every refusal of one. */
export const CURSOR_RULE = 'a cursor given in the `Link` header of a previous page'

/**
 * The listing's query as its schema leaves it: limit 1–1000 (default 100), a search text, any of
 * 1–20 tags, a sort (default id), whether to count, and where to start: after an id (the id order
 * only) or at a cursor.
 */
export interface PlantListQuery {
  limit: number
  q?: string
  tag?: string[]
  sort: SortText
  count?: boolean
  after?: bigint
  cursor?: string
}

/** A PUT body as its schema leaves it; an id, when present, must equal the path's (a domain rule). */
export interface Replacement {
  id?: bigint
  name: string
  tag?: string
}

/** A merge patch as its schema leaves it: `tag: null` removes the tag, an absent field stays. */
export interface MergePatch {
  id?: bigint
  name?: string
  tag?: string | null
}
