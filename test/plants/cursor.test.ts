import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AppError, errors } from '../../src/errors.js'
import { decodeCursor, encodeCursor, filterDigest } from '../../src/plants/cursor.js'
import { INT64_MAX, INT64_MIN } from '../../src/plants/int64.js'
import type { SortText } from '../../src/plants/validate.js'

/** The refusal a decode throws, as `{error, message}`; fails the test when it decodes. */
function refusal(decode: () => unknown): { error: number; message: string } {
  try {
    decode()
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    return { error: error.entry.code, message: error.message }
  }
  throw new Error('the cursor was taken')
}

const OTHER_QUERY =
  'The query parameter cursor belongs to another listing: send it with the sort, q and tag of the request whose `Link` header gave it.'
const MALFORMED = 'The query parameter cursor must be a cursor given in the `Link` header of a previous page.'

/** A cursor written as the service writes one, around any text: only the content is forged. */
function forgedText(content: string): string {
  const text = Buffer.from(content)
  const sum = createHash('sha256').update(text).digest().subarray(0, 12)
  return Buffer.concat([sum, text]).toString('base64url')
}

const forged = (body: unknown): string => forgedText(JSON.stringify(body))

describe('the listing cursor', () => {
  it('gives back the position it was made from, for its own sort and filter', () => {
    const sorts = fc.constantFrom<SortText>('name', '-name', 'createdAt', '-updatedAt')
    const position = fc.record({
      id: fc.bigInt({ min: INT64_MIN, max: INT64_MAX }),
      // Names as a listing gives them: code points of one to four bytes, quotes and backslashes too.
      key: fc.string({
        minLength: 1,
        maxLength: 200,
        unit: fc.constantFrom('a', 'Ö', 'ς', '\u{1F33F}', '"', '\\', ' ', '%'),
      }),
    })
    fc.assert(
      fc.property(sorts, position, fc.option(fc.string({ minLength: 1 })), (sort, { id, key }, text) => {
        const at = sort.endsWith('name') ? { id, key } : { id, key: String(id) }
        const filter = text === null ? {} : { text }
        const cursor = encodeCursor(sort, filter, at)
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
        expect(decodeCursor(cursor, sort, filter)).toEqual(at)
      }),
    )
    expect(decodeCursor(encodeCursor('-id', {}, { id: INT64_MIN }), '-id', {})).toEqual({ id: INT64_MIN })
  })

  it('fits the length the query schema allows, with a name of 200 four-byte characters', () => {
    const key = '\u{1F33F}'.repeat(200)
    const cursor = encodeCursor('-name', { text: 'x'.repeat(200), tags: ['a'] }, { id: INT64_MIN, key })
    expect(cursor.length).toBeLessThanOrEqual(2000)
  })

  it('binds the sort and the filter, the tags as a set', () => {
    const filter = { text: 'fern', tags: ['b', 'a'] }
    const cursor = encodeCursor('name', filter, { id: 5n, key: 'Fern' })
    expect(decodeCursor(cursor, 'name', { text: 'fern', tags: ['a', 'b', 'a'] })).toEqual({
      id: 5n,
      key: 'Fern',
    })
    for (const [sort, other] of [
      ['-name', filter],
      ['id', filter],
      ['name', { text: 'fer', tags: ['a', 'b'] }],
      ['name', { tags: ['a', 'b'] }],
      ['name', { text: 'fern', tags: ['a'] }],
      ['name', { text: 'fern' }],
    ] as const) {
      expect(refusal(() => decodeCursor(cursor, sort, other))).toEqual({
        error: errors.QUERY_INVALID.code,
        message: OTHER_QUERY,
      })
    }
    expect(filterDigest({ tags: ['a', 'b'] })).not.toBe(filterDigest({ tags: ['a,b'] }))
    expect(filterDigest({ text: 'a' })).not.toBe(filterDigest({ tags: ['a'] }))
  })

  it('refuses a cursor that was altered anywhere, cut short or lengthened', () => {
    const cursor = encodeCursor('createdAt', { tags: ['fern'] }, { id: 42n, key: '1700000000000' })
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    for (let i = 0; i < cursor.length; i++) {
      const swapped = alphabet[(alphabet.indexOf(cursor[i] as string) + 1) % 64] as string
      const altered = cursor.slice(0, i) + swapped + cursor.slice(i + 1)
      expect(refusal(() => decodeCursor(altered, 'createdAt', { tags: ['fern'] }))).toEqual({
        error: errors.QUERY_INVALID.code,
        message: MALFORMED,
      })
    }
    for (const bad of [cursor.slice(0, -1), `${cursor}A`, cursor.slice(0, 10), 'A', `${cursor}==`]) {
      expect(refusal(() => decodeCursor(bad, 'createdAt', { tags: ['fern'] })).message).toBe(MALFORMED)
    }
  })

  it('refuses content no listing gives, even under a checksum that holds', () => {
    const digest = filterDigest({})
    const at = { v: 1, f: digest, i: '7' }
    for (const [sort, body] of [
      ['id', { ...at, s: 'id', v: 2 }],
      ['id', { ...at, s: 'id', i: '9223372036854775808' }],
      ['id', { ...at, s: 'id', i: '07' }],
      ['id', { ...at, s: 'id', i: 7 }],
      ['id', { ...at, s: 'id', k: 'x' }],
      ['name', { ...at, s: 'name' }],
      ['name', { ...at, s: 'name', k: '' }],
      ['name', { ...at, s: 'name', k: 'a\u0000b' }],
      ['name', { ...at, s: 'name', k: '\ud800' }],
      ['name', { ...at, s: 'name', k: 'x'.repeat(201) }],
      ['createdAt', { ...at, s: 'createdAt', k: '1.5' }],
      ['createdAt', { ...at, s: 'createdAt', k: 'yesterday' }],
      ['updatedAt', { ...at, s: 'updatedAt', k: 17 }],
      ['id', [1, 'id', digest, '7']],
      ['id', null],
    ] as const) {
      expect(refusal(() => decodeCursor(forged(body), sort as SortText, {})).message).toBe(MALFORMED)
    }
    expect(decodeCursor(forged({ ...at, s: 'name', k: 'a' }), 'name', {})).toEqual({ id: 7n, key: 'a' })
  })

  it('refuses a text that is not JSON, even under a checksum that holds', () => {
    for (const text of ['{"v":1,', 'v=1&s=id', '{"v":1}x']) {
      expect(refusal(() => decodeCursor(forgedText(text), 'id', {})).message).toBe(MALFORMED)
    }
  })
})
