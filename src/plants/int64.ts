// Ids are signed 64-bit integers carried as `bigint` from the request text to the database and back,
// because a JS number silently drops digits past 2^53.

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/

/** Parses a base-10 integer literal exactly; null when it is not one or falls outside int64. */
export function parseInt64(text: string): bigint | null {
  // "-0" has no distinct int64 value: accepting it would make two spellings of one id.
  if (text.length > 20 || !INTEGER_LITERAL.test(text) || text === '-0') return null
  const value = BigInt(text)
  return value < INT64_MIN || value > INT64_MAX ? null : value
}
