import { isLosslessNumber, type LosslessNumber, parse, stringify } from 'lossless-json'
import { parseInt64 } from '../plants/int64.js'
import { PlantStoreError } from './error.js'

/**
 * Fields that hold an int64 (or a list of them) in this API, typed bigint in ./schema.d.ts; everything
 * else numeric is an int32 and safe as a number. A test holds this to the document.
 */
export const INT64_FIELDS: ReadonlySet<string> = new Set(['id', 'ids', 'deleted', 'queued'])

function exact(key: string, value: LosslessNumber): bigint {
  const parsed = parseInt64(value.value)
  if (parsed === null) throw new SyntaxError(`${key} is not an int64: ${value.value}`)
  return parsed
}

/**
 * Parses a response body without losing digits: `id` (and each id of `deleted`) becomes an exact
 * bigint, every other number a plain number. `JSON.parse` would round 9223372036854775807 to
 * 9223372036854775808.
 */
export function parseExactJson(text: string): unknown {
  return parse(text, function (this: unknown, key, value) {
    // A list's numbers are read with the list, whose field says what they are.
    if (Array.isArray(value)) {
      return value.map((item: unknown) =>
        isLosslessNumber(item) ? (INT64_FIELDS.has(key) ? exact(key, item) : Number(item.value)) : item,
      )
    }
    if (!isLosslessNumber(value) || Array.isArray(this)) return value
    return INT64_FIELDS.has(key) ? exact(key, value) : Number(value.value)
  })
}

/** Writes a request body, bigints as bare JSON integers (JSON.stringify throws on them). */
export function stringifyExactJson(body: unknown): string {
  return stringify(body) as string
}

/**
 * openapi-fetch reads JSON with `response.json()`, or with `JSON.parse` when there is no
 * Content-Length. This gives it a response read in full (a connection reset half-way is then no
 * response, whatever the body), that always has a Content-Length, and whose json() is exact. A body
 * json() cannot read, such as a captive proxy's `200 text/html` or an id past int64, is a failure of
 * the call like any other: a PlantStoreError with the status, not a bare SyntaxError.
 */
export async function withExactJson(response: Response): Promise<Response> {
  // Nothing to read: a 204 or 304, or a HEAD (a Response cannot be built with a body for those).
  // A browser's fetch gives a 204 an empty body stream rather than none, so the status is asked too.
  if (response.body === null || response.status === 204 || response.status === 304) return response
  const type = response.headers.get('content-type') ?? ''
  const text = await response.text()
  const headers = new Headers(response.headers)
  headers.delete('content-encoding')
  headers.set('content-length', String(new TextEncoder().encode(text).length))
  const exact = new Response(text, { status: response.status, statusText: response.statusText, headers })
  const json = async () => {
    try {
      if (!/^application\/([a-z.+-]*\+)?json\s*(;|$)/i.test(type))
        throw new SyntaxError(`${type || 'no content type'} is not JSON`)
      return parseExactJson(text)
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause)
      throw new PlantStoreError(
        response.status,
        undefined,
        `HTTP ${response.status}, unreadable: ${reason}`,
        { cause, headers: response.headers },
      )
    }
  }
  Object.defineProperty(exact, 'json', { value: json })
  Object.defineProperty(exact, 'url', { value: response.url })
  return exact
}
