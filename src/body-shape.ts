import { AppError, errors } from './errors.js'
import { InexactNumber, JSON_NULL } from './plants/json.js'
import type { ShapeCheck } from './validation-errors.js'

// A JSON body must be an object before its fields are looked at: the same refusal for a request body
// (src/http/validation.ts) and an imported line (src/plants/import-line.ts).

/** What a body that is not an object is, in JSON's words. */
function jsonKind(body: unknown): string {
  if (body === JSON_NULL) return 'null'
  if (Array.isArray(body)) return 'an array'
  if (typeof body === 'bigint' || body instanceof InexactNumber) return 'a number'
  return `a ${typeof body}`
}

/** The refusal of a body that is absent (no body, or a blank one) or not a JSON object. */
function bodyRefusal(body: unknown): AppError {
  // The framework gives null for a request without a body; the JSON literal null is JSON_NULL.
  if (body === undefined || body === null) return new AppError(errors.BODY_MISSING)
  return new AppError(
    errors.BODY_NOT_OBJECT,
    `The request body must be a JSON object, not ${jsonKind(body)}.`,
  )
}

/** A JSON body's check: an object, then the check of its shape's fields. */
export function objectBody(check: ShapeCheck): ShapeCheck {
  return (value) => {
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      value instanceof InexactNumber
    ) {
      return bodyRefusal(value)
    }
    return check(value)
  }
}
