import { isLosslessNumber, parse, stringify } from 'lossless-json'
import { parseInt64 } from '../plants/int64.js'

/** Fields that hold an int64 in this API; everything else numeric is an int32 and safe as a number. */
const INT64_FIELDS = new Set(['id'])

/**
 * Parses a response body without losing digits: `id` becomes an exact bigint, every other number a
 * plain number. `JSON.parse` would round 9223372036854775807 to 9223372036854775808.
 */
export function parseExactJson(text: string): unknown {
  return parse(text, (key, value) => {
    if (!isLosslessNumber(value)) return value
    if (INT64_FIELDS.has(key)) {
      const exact = parseInt64(value.value)
      if (exact === null) throw new SyntaxError(`${key} is not an int64: ${value.value}`)
      return exact
    }
    return Number(value.value)
  })
}

/** Writes a request body, bigints as bare JSON integers (JSON.stringify throws on them). */
export function stringifyExactJson(body: unknown): string {
  return stringify(body) as string
}

/**
 * openapi-fetch reads JSON with `response.json()`, or with `JSON.parse` when there is no
 * Content-Length. This gives it a response that always has one, and whose json() is exact.
 */
export async function withExactJson(response: Response): Promise<Response> {
  const type = response.headers.get('content-type') ?? ''
  if (!/^application\/([a-z.+-]*\+)?json/i.test(type) || response.status === 204) return response
  const text = await response.text()
  const headers = new Headers(response.headers)
  headers.delete('content-encoding')
  headers.set('content-length', String(new TextEncoder().encode(text).length))
  const exact = new Response(text, { status: response.status, statusText: response.statusText, headers })
  Object.defineProperty(exact, 'json', { value: async () => parseExactJson(text) })
  Object.defineProperty(exact, 'url', { value: response.url })
  return exact
}
