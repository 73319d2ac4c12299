import { parse } from 'lossless-json'
import { parseInt64 } from './int64.js'

/**
 * A JSON number literal that is not an exact int64 (1.5, 1e3, 1.0, -0, out of range). It is kept as
 * its source text so that validation can reject it by name instead of by a rounded value.
 */
export class InexactNumber {
  constructor(readonly text: string) {}
}

/** Stands for a body that is the JSON literal `null`, which is not the same as no body at all. */
export const JSON_NULL: unique symbol = Symbol('json-null')

function parseNumber(text: string): bigint | InexactNumber {
  return parseInt64(text) ?? new InexactNumber(text)
}

/**
 * Parses JSON without ever going through a JS number: integer literals become `bigint`, every other
 * number an InexactNumber. `__proto__` keys stay plain own properties, duplicate keys are an error.
 * Throws SyntaxError on malformed input.
 */
export function parseJsonExact(text: string): unknown {
  const value = parse(text, null, parseNumber)
  return value === null ? JSON_NULL : value
}
