import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonDocument, parseJsonExact, parseJsonGeneral } from '../../src/plants/json.js'

/** The outcome of a parse, comparable: the value, or that it threw. */
function outcome(parse: (text: string) => unknown, text: string): unknown {
  try {
    return { value: parse(text) }
  } catch {
    // Which error does not matter here: the two parsers must agree on what is refused.
    return { threw: true }
  }
}

const whitespace = fc.constantFrom('', ' ', '\n', '\t ', '\r\n')
const numberText = fc.oneof(
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('-0', '1e3', '1.0', '0.5', '9223372036854775807', '-9223372036854775808', '1E-2'),
)
const valueText = fc.oneof(
  fc.string({ unit: 'grapheme' }).map((s) => JSON.stringify(s)),
  numberText,
  fc.constantFrom('true', 'false', 'null', '[1,2]', '{"a":1}'),
)
const keyText = fc.oneof(
  fc.constantFrom('id', 'name', 'tag', '__proto__', 'constructor', '1', ''),
  fc.string({ maxLength: 8 }),
)

/** Object texts of the shape clients send, with the odd repeated key, nesting or escape mixed in. */
const objectText = fc
  .array(fc.tuple(whitespace, keyText, whitespace, valueText, whitespace), { maxLength: 5 })
  .map(
    (members) =>
      `{${members.map(([a, key, b, value, c]) => `${a}${JSON.stringify(key)}${b}:${c}${value}`).join(',')}}`,
  )

describe('exact JSON parsing', () => {
  it('reads a typical create body without digits lost', () => {
    expect(parseJsonExact('{"id":9223372036854775807,"name":"Monstera","tag":"aroid"}')).toEqual({
      id: 9223372036854775807n,
      name: 'Monstera',
      tag: 'aroid',
    })
  })

  it('gives what the general parser gives for any object text, or fails where it fails', () => {
    fc.assert(
      fc.property(objectText, whitespace, (text, around) => {
        const padded = `${around}${text}${around}`
        expect(outcome(parseJsonExact, padded)).toEqual(outcome(parseJsonGeneral, padded))
      }),
      { numRuns: 2000 },
    )
  })

  it('gives what the general parser gives for arbitrary text', () => {
    const texts = fc.oneof(
      fc.string(),
      fc.json(),
      objectText.map((t) => t.slice(0, -1)),
      objectText.map((t) => `${t}x`),
      objectText.map((t) => t.replace(':', '')),
      objectText.map((t) => t.replace('"', '"\u0001')),
    )
    fc.assert(
      fc.property(texts, (text) => {
        expect(outcome(parseJsonExact, text)).toEqual(outcome(parseJsonGeneral, text))
      }),
      { numRuns: 2000 },
    )
  })

  it('refuses a repeated key and keeps __proto__ an ordinary key, as the general parser does', () => {
    expect(() => parseJsonExact('{"id":1,"id":2}')).toThrow()
    // Also when both values are the same: which one a reader keeps is still up to the reader.
    expect(() => parseJsonExact('{"id":1,"id":1}')).toThrow("Duplicate key 'id' encountered at position 9")
    expect(() => parseJsonExact('{"a":{"b":[1],"b":[1]}}')).toThrow("Duplicate key 'b'")
    expect(() => parseJsonExact('{"a":"x","\\u0061":"x"}')).toThrow("Duplicate key 'a'")
    // The same key in two objects, or a key's text as a value, is no repeat.
    expect(parseJsonExact('[{"a":"a"},{"a":"a"}]')).toEqual([{ a: 'a' }, { a: 'a' }])
    expect(parseJsonExact('{"a":"a","b":{"a":"b"}}')).toEqual({ a: 'a', b: { a: 'b' } })
    const parsed = parseJsonExact('{"__proto__":{"polluted":1},"id":1}') as Record<string, unknown>
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true)
  })
})

describe('where a malformed body is said to go wrong', () => {
  /** The message a body's parse fails with. */
  function failure(body: string): string {
    try {
      parseJsonDocument(body)
    } catch (error) {
      return (error as Error).message
    }
    throw new Error(`parsed: ${body}`)
  }

  // Each with the text from the fault to the end, as the bytes from the offset on decode.
  it.each([
    ['text after the value', '{"name": "🌿é", "id": 1}x', "Expected end of input but got 'x'", 27, 'x'],
    [
      'a repeated key',
      '{"name": "Ω", "id": 1, "name": "Ω"}',
      "Duplicate key 'name' encountered",
      25,
      'name": "Ω"}',
    ],
    ['a body cut short', '{"tag": "日本", "name": ', "Object value expected after ':'", 26, ''],
    [
      'a no-break space',
      '{"name": "é", "id": 1,\u00a0"tag": "x"}',
      'Quoted object key expected but got U+00A0',
      23,
      '\u00a0"tag": "x"}',
    ],
    [
      'an emoji after the value',
      '{"name": "é"}\u{1f33f}',
      'Expected end of input but got U+1F33F',
      14,
      '\u{1f33f}',
    ],
    ['nesting too deep', `["é", ${'['.repeat(513)}`, 'Value nested deeper than 512 levels', 518, '[['],
  ])(
    '%s after characters of several bytes: at its byte offset in the body as sent',
    (_what, body, detail, offset, rest) => {
      expect(failure(body)).toBe(`The request body is not valid JSON: ${detail} at position ${offset}`)
      // The offset is where a client holding the bytes (curl --data-binary @file) finds the fault.
      expect(Buffer.from(body).subarray(offset).toString()).toBe(rest)
    },
  )
})
