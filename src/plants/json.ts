import { isUtf8 } from 'node:buffer'
import { parse } from 'lossless-json'
import { AppError, errors } from '../errors.js'
import { parseInt64 } from './int64.js'

/** A body's text; a 400 when its bytes are not UTF-8, which JSON requires (RFC 8259 §8.1). */
export function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new AppError(errors.BODY_MALFORMED, 'The request body is not valid UTF-8.')
  return bytes.toString('utf8')
}

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
  return parseFlatObject(text) ?? parseJsonGeneral(text)
}

/**
 * A request body (or an import line, which must be one) parsed exactly; malformed JSON, a repeated
 * key or text after the value is the 400 40002 that names the fault.
 */
export function parseJsonDocument(text: string): unknown {
  try {
    return parseJsonExact(text)
  } catch (error) {
    const detail = error instanceof Error ? error.message : ''
    throw new AppError(
      errors.BODY_MALFORMED,
      `The request body is not valid JSON: ${inBytes(visible(detail, text), text)}`,
    )
  }
}

/** Every message of the parser, and of the checks around it, ends with where it stopped. */
const POSITION = / at position (\d+)$/

/**
 * The parser counts positions in UTF-16 units of the decoded text; a client that sent bytes (curl
 * --data-binary @file) finds the fault by its offset in them, so the message gives that: the UTF-8
 * length of the text before the fault, counted on the error path only. The count is exact: the text
 * was decoded from valid UTF-8, so it holds no lone surrogate, and every position falls where a
 * character starts (the parser stops only at ASCII, or at the first unit of what it did not expect).
 */
function inBytes(detail: string, text: string): string {
  const at = POSITION.exec(detail)
  if (at === null) return detail
  return detail.replace(POSITION, ` at position ${Buffer.byteLength(text.slice(0, Number(at[1])))}`)
}

/**
 * The parser quotes the character it stopped at; one that shows as nothing or as a plain space (a
 * byte order mark, a zero-width or no-break space, a control character) is named by its code point.
 * It quotes a single UTF-16 unit, so a character past U+FFFF (an emoji) arrives as its first half, a
 * surrogate: where the text holds that unit at the position given, the whole code point is named.
 */
function visible(detail: string, text: string): string {
  return detail.replace(
    /'((?! )[\p{C}\p{Z}])'( at position (\d+))?/u,
    (_, char: string, at: string | undefined, position: string | undefined) => {
      const unit = char.codePointAt(0) as number
      const where = position === undefined ? -1 : Number(position)
      const code = text.charCodeAt(where) === unit ? (text.codePointAt(where) as number) : unit
      return `U+${code.toString(16).toUpperCase().padStart(4, '0')}${at ?? ''}`
    },
  )
}

/** parseJsonExact without the flat-object shortcut (its tests compare the two). */
export function parseJsonGeneral(text: string): unknown {
  refuseDeepNesting(text)
  const value = parse(text, null, parseNumber)
  refuseRepeatedKeys(text)
  return value === null ? JSON_NULL : value
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a

/** Far more than any plant or webhook body needs, and far less than the parser's stack allows. */
export const MAX_NESTING = 512

/**
 * The parser recurses once per level, so without a bound a deep enough text runs it out of stack,
 * and where that happens depends on the call stack it started from and on what the JIT has compiled:
 * the same body could be accepted by one request path and refused by another, or by the same one a
 * moment later. Counts `[` and `{` outside strings before parsing, so malformed text is safe here.
 */
function refuseDeepNesting(text: string): void {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) i++
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_NESTING) {
        throw new SyntaxError(`Value nested deeper than ${MAX_NESTING} levels at position ${i}`)
      }
    } else if (c === 0x7d || c === 0x5d) depth--
  }
}

function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/**
 * lossless-json refuses a repeated key only when its two values differ, yet `{"id":1,"id":1}` is as
 * ambiguous to every other reader of the text (a proxy, a log, a signature check) as any repeat.
 * Runs on text the parser has accepted, so every string in it is well formed; a key is told from a
 * value by the colon after it, and compared as decoded (`"a"` and `"\u0061"` are one key).
 */
function refuseRepeatedKeys(text: string): void {
  // One entry per open object (its keys so far) or array (undefined).
  const open: Array<Set<string> | undefined> = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x7b) open.push(new Set())
    else if (c === 0x5b) open.push(undefined)
    else if (c === 0x7d || c === 0x5d) open.pop()
    else if (c === QUOTE) {
      const start = i
      let escaped = false
      for (i++; text.charCodeAt(i) !== QUOTE; i++) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true
          i++
        }
      }
      const keys = open[open.length - 1]
      if (keys === undefined) continue
      let next = i + 1
      while (isJsonWhitespace(text.charCodeAt(next))) next++
      if (text.charCodeAt(next) !== COLON) continue
      const literal = text.slice(start, i + 1)
      const key = escaped ? (JSON.parse(literal) as string) : literal.slice(1, -1)
      // Worded and placed as the parser words a repeat whose values differ.
      if (keys.has(key)) throw new SyntaxError(`Duplicate key '${key}' encountered at position ${start + 1}`)
      keys.add(key)
    }
  }
}

// One member of a flat object: a key, then a string without escapes or control characters, a
// number, true, false or null, then what follows it. Sticky: each match starts where the last ended.
const MEMBER =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in a string, so the shortcut must not accept them
  /[\t\n\r ]*"([^"\\\u0000-\u001f]*)"[\t\n\r ]*:[\t\n\r ]*(?:"([^"\\\u0000-\u001f]*)"|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null))[\t\n\r ]*([,}])/y
const OPENING = /^[\t\n\r ]*\{/
const TRAILING = /^[\t\n\r ]*$/

/**
 * The body nearly every client sends, `{"id":…,"name":"…","tag":"…"}`, read without a general
 * parser: an object whose members are strings without escapes, numbers and literals. Its numbers
 * get exactly the values the general path gives them. Anything else (nesting, escapes, a repeated
 * key, `__proto__`, malformed text) returns undefined and goes through the general path, which also
 * words every syntax error.
 */
function parseFlatObject(text: string): Record<string, unknown> | undefined {
  const opening = OPENING.exec(text)
  if (!opening) return undefined
  const object: Record<string, unknown> = {}
  MEMBER.lastIndex = opening[0].length
  for (;;) {
    const member = MEMBER.exec(text)
    if (!member) return undefined
    const [, key, string, number, literal, next] = member as unknown as [
      string,
      string,
      string | undefined,
      string | undefined,
      string | undefined,
      string,
    ]
    if (key === '__proto__' || Object.hasOwn(object, key)) return undefined
    object[key] =
      string !== undefined
        ? string
        : number !== undefined
          ? parseNumber(number)
          : literal === 'true'
            ? true
            : literal === 'false'
              ? false
              : null
    if (next === '}') return TRAILING.test(text.slice(MEMBER.lastIndex)) ? object : undefined
  }
}
