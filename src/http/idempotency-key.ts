import { AppError, errors } from '../errors.js'

const BARE = /^[\x21\x23-\x7e][\x21-\x7e]{0,254}$/
// An sf-string (RFC 8941 §3.3.3): printable ASCII and spaces, with \" and \\ escaped.
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/
const OWS_AROUND = /^[ \t]+|[ \t]+$/g

/**
 * The Idempotency-Key header, taken bare or as a quoted string (the draft makes it an sf-string;
 * clients send both). The key is the unquoted text; undefined when the header is absent.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header === 'string') {
    // Only the optional whitespace of HTTP (space, tab): trim() would also drop a no-break space,
    // which Node passes on as a byte of obs-text, and so take `\xa0abc` for the key `abc`.
    const value = header.replace(OWS_AROUND, '')
    const quoted = QUOTED.exec(value)
    const key = quoted ? (quoted[1] as string).replace(/\\(["\\])/g, '$1') : BARE.test(value) ? value : ''
    if (key.length >= 1 && key.length <= 255) return key
  }
  throw new AppError(errors.IDEMPOTENCY_KEY_INVALID)
}
