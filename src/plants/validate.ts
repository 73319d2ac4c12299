import { AppError, errors } from '../errors.js'
import { JSON_NULL } from './json.js'
import { NAME_MAX_LENGTH, type NewPlant, TAG_MAX_LENGTH } from './model.js'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Length in code points (so an emoji counts once), or -1 when the text holds a C0 control character
 * or a lone surrogate. PostgreSQL cannot store U+0000 and a lone surrogate has no UTF-8 encoding, so
 * both stores refuse the same inputs; no name is meant to hold a control character anyway.
 */
function measureText(text: string): number {
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

function checkText(value: string, max: number, lengthError: typeof errors.NAME_LENGTH, field: string): void {
  const length = measureText(value)
  if (length === -1) {
    throw new AppError(
      errors.TEXT_CHARACTERS,
      `The field ${field} must not contain control characters or lone surrogates.`,
    )
  }
  if (length < 1 || length > max) throw new AppError(lengthError)
}

export function requireBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) throw new AppError(errors.BODY_MISSING)
  if (!isRecord(body)) {
    const kind = body === JSON_NULL ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`
    throw new AppError(errors.BODY_NOT_OBJECT, `The request body must be a JSON object, not ${kind}.`)
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
  checkText(value, NAME_MAX_LENGTH, errors.NAME_LENGTH, 'name')
  return value
}

/** A tag is a string when present; `null` is refused here (create and PUT say "string"). */
export function validateTag(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new AppError(errors.TAG_INVALID)
  checkText(value, TAG_MAX_LENGTH, errors.TAG_LENGTH, 'tag')
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
