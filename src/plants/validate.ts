import { AppError, errors } from '../errors.js'
import { parseInt64 } from './int64.js'
import { InexactNumber, JSON_NULL } from './json.js'
import { NAME_MAX_LENGTH, type NewPlant, TAG_MAX_LENGTH } from './model.js'

function isRecord(value: unknown): value is Record<string, unknown> {
  // The exact parser keeps a number that is not an int64 (1.5, 1e3) as an object of its own.
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof InexactNumber)
  )
}

/** What a body that is not an object is, in JSON's words. */
function jsonKind(body: unknown): string {
  if (body === JSON_NULL) return 'null'
  if (Array.isArray(body)) return 'an array'
  if (typeof body === 'bigint' || body instanceof InexactNumber) return 'a number'
  return `a ${typeof body}`
}

/**
 * Length in code points (so an emoji counts once), or -1 when the text holds a C0 control character
 * or a lone surrogate. PostgreSQL cannot store U+0000 and a lone surrogate has no UTF-8 encoding, so
 * both stores refuse the same inputs; no name is meant to hold a control character anyway. Every
 * stored text field (webhook descriptions and URLs too) is measured here.
 */
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

function checkText(
  value: string,
  max: number,
  lengthError: typeof errors.NAME_LENGTH,
  field: string,
  charactersError: typeof errors.TEXT_CHARACTERS = errors.TEXT_CHARACTERS,
): void {
  const length = measureText(value)
  if (length === -1) {
    throw new AppError(
      charactersError,
      `The ${field} must not contain control characters or lone surrogates.`,
    )
  }
  // The same words as the body fields' own catalog entries, for the query's shared one too.
  if (length < 1 || length > max)
    throw new AppError(lengthError, `The ${field} must be 1 to ${max} characters long.`)
}

export function requireBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new AppError(errors.BODY_MISSING)
  if (!isRecord(body)) {
    throw new AppError(
      errors.BODY_NOT_OBJECT,
      `The request body must be a JSON object, not ${jsonKind(body)}.`,
    )
  }
  return body
}

export function validateId(value: unknown): bigint {
  if (value === undefined) throw new AppError(errors.ID_MISSING)
  if (typeof value !== 'bigint') throw new AppError(errors.ID_INVALID)
  return value
}

export function validateName(value: unknown): string {
  if (typeof value !== 'string') throw new AppError(errors.NAME_INVALID)
  checkText(value, NAME_MAX_LENGTH, errors.NAME_LENGTH, 'field name')
  return value
}

/** A tag is a string when present; `null` is refused here (create and PUT say "string"). */
export function validateTag(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new AppError(errors.TAG_INVALID)
  checkText(value, TAG_MAX_LENGTH, errors.TAG_LENGTH, 'field tag')
  return value
}

/** Validates a create body; unknown fields are dropped so they are never stored. */
export function validateNewPlant(body: unknown): NewPlant {
  const record = requireBody(body)
  const id = validateId(record.id)
  const name = validateName(record.name)
  const tag = validateTag(record.tag)
  return tag === undefined ? { id, name } : { id, name, tag }
}

/** A PUT body: the Plant shape. An `id`, when present, is returned so the caller can match the path. */
export function validateReplacement(body: unknown): { id?: bigint; name: string; tag?: string } {
  const record = requireBody(body)
  const name = validateName(record.name)
  const tag = validateTag(record.tag)
  const replacement: { id?: bigint; name: string; tag?: string } = { name }
  if (record.id !== undefined) replacement.id = validateId(record.id)
  if (tag !== undefined) replacement.tag = tag
  return replacement
}

/**
 * A JSON merge patch (RFC 7386) of a plant: a named field is set, `tag: null` removes the tag, an
 * absent field stays. name cannot be removed, and an `id` may only repeat the path's.
 */
export function validateMergePatch(body: unknown): { id?: bigint; name?: string; tag?: string | null } {
  const record = requireBody(body)
  const patch: { id?: bigint; name?: string; tag?: string | null } = {}
  if (record.id !== undefined) patch.id = validateId(record.id)
  if (record.name !== undefined) patch.name = validateName(record.name)
  if (record.tag === null) patch.tag = null
  else if (record.tag !== undefined) patch.tag = validateTag(record.tag)
  return patch
}

export const LIST_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 1000

export interface PlantListQuery {
  limit: number
  after?: bigint
  tag?: string
}

/** One query parameter's text; given twice it is refused, not merged (`?limit=1&limit=2`). */
export function queryValue(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') {
    throw new AppError(errors.QUERY_INVALID, `The query parameter ${name} must be given at most once.`)
  }
  return value
}

/** A parsed query string's parameters by name; nothing when there is none. */
export function queryParams(query: unknown): Record<string, unknown> {
  return isRecord(query) ? query : {}
}

/** A listing's page size: `fallback` when absent, else an integer from 1 to `max` in plain digits. */
export function queryLimit(query: Record<string, unknown>, max: number, fallback: number): number {
  const text = queryValue(query, 'limit')
  if (text === undefined) return fallback
  // Digits only, and no more of them than max has: `+5`, `05`, `1e2` and 20-digit numbers are refused.
  const limit = /^[1-9][0-9]*$/.test(text) && text.length <= String(max).length ? Number(text) : 0
  if (limit < 1 || limit > max) {
    throw new AppError(errors.QUERY_INVALID, `The query parameter limit must be an integer from 1 to ${max}.`)
  }
  return limit
}

/** The listing's query string: limit 1–1000 (default 100), an int64 `after` cursor, a tag filter. */
export function validateListQuery(query: unknown): PlantListQuery {
  const raw = queryParams(query)
  const afterText = queryValue(raw, 'after')
  const tag = queryValue(raw, 'tag')
  const result: PlantListQuery = { limit: queryLimit(raw, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT) }
  if (afterText !== undefined) {
    const after = parseInt64(afterText)
    if (after === null) {
      throw new AppError(
        errors.QUERY_INVALID,
        'The query parameter after must be a plant id (an integer from -9223372036854775808 to 9223372036854775807).',
      )
    }
    result.after = after
  }
  if (tag !== undefined) {
    // Every error of a query parameter is 40012, as for limit and after.
    checkText(tag, TAG_MAX_LENGTH, errors.QUERY_INVALID, 'query parameter tag', errors.QUERY_INVALID)
    result.tag = tag
  }
  return result
}
