import type { RateLimit } from '../config.js'
import { inDays, MAX_DURATION_MS, parseDuration } from '../duration.js'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { parseRateLimit, RATE_LIMIT_FORM } from '../rate-limit-text.js'
import type { TokenCursor } from '../store/types.js'
import { holdsToken } from './format.js'
import { SCOPES, type Scope } from './scopes.js'

// The rules of what a token may be given: the same for `plantstore token create` and POST /tokens,
// with the same words. The CLI says them of its flag (`invalid --name: …`), HTTP of the field
// (requests.ts reads the bodies and queries with them).

export type TokenField = 'name' | 'scopes' | 'expiresIn' | 'rateLimit' | 'overlap'

/** A refused value: its catalog entry for HTTP, and the reason both the CLI and HTTP give. */
export class TokenInputError extends AppError {
  constructor(
    entry: CatalogEntry,
    readonly field: TokenField,
    readonly reason: string,
  ) {
    super(entry, `The field ${field} is invalid: ${reason}.`)
  }
}

export const NAME_MAX_LENGTH = 100
/** The shortest lifetime: a token that expires before anyone can use it is a mistake, not a lifetime. */
const MIN_LIFETIME_MS = 1000
/** The longest overlap a roll takes: a roll is meant to end the old secret, not to keep two for long. */
export const MAX_OVERLAP_MS = 30 * 86_400_000
export const DEFAULT_OVERLAP_MS = 24 * 3_600_000

/** Why a value is refused, said alike by the schema's refusals (http/validation-errors.ts) and here. */
export const NAME_LENGTH_REASON = `expected 1 to ${NAME_MAX_LENGTH} characters`
export const SCOPES_REASON = `expected a list of one or more of ${SCOPES.join(', ')}`
export const EXPIRES_IN_REASON = `expected e.g. 30s, 15m, 12h, 30d, at least 1s, at most ${inDays(MAX_DURATION_MS)} (100 years)`
export const RATE_LIMIT_REASON = `expected ${RATE_LIMIT_FORM}`
export const OVERLAP_REASON = `expected a duration such as 0s, 1h, 24h, at most ${inDays(MAX_OVERLAP_MS)}`

// The NewToken and TokenRollRequest schemas (src/http/schemas.ts) check each field's type, the
// name's length, the scopes and the rate limit's form, for POST /tokens and `token create` alike.
// What follows are the rules they cannot say: what the name holds once trimmed, and the values the
// duration and rate-limit texts stand for.

const BIDI_FORMATTING = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u

/** A name, trimmed: its length as given is the schema's; what it may hold is said here. */
export function tokenName(value: string): string {
  const refuse = (reason: string) => new TokenInputError(errors.TOKEN_NAME_INVALID, 'name', reason)
  const name = value.trim()
  // A tab or a newline would break the columns of `token list`, and an escape could drive the terminal.
  if (/\p{Cc}/u.test(name)) throw refuse('control characters such as tab or newline are not allowed')
  // A bidirectional override or isolate would reorder the rest of its `token list` line on screen, so
  // a name could pass itself off as another token's.
  if (BIDI_FORMATTING.test(name)) {
    throw refuse('bidirectional formatting characters such as U+202E are not allowed')
  }
  // A token pasted where its name belongs (`--name "$TOKEN"`) would be stored whole and shown by every
  // listing, where only the hash of a secret is ever kept.
  if (holdsToken(name)) throw refuse('it holds a token; name what the token is for instead')
  // A lone surrogate has no UTF-8 encoding: stored, it would come back as U+FFFD.
  if (/\p{Cs}/u.test(name)) throw refuse('lone surrogates are not allowed')
  // Blank is not a name, though its spaces make it long enough for the schema.
  if (name.length === 0) throw refuse(NAME_LENGTH_REASON)
  return name
}

/** The scopes the schema let through, each once. */
export function scopesOf(scopes: readonly Scope[]): Scope[] {
  return [...new Set(scopes)]
}

/** A lifetime in milliseconds, from a duration such as `30d`; null or undefined: no expiry. */
export function expiresInMs(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null) return undefined
  const ms = parseDuration(value)
  if (ms === null || ms < MIN_LIFETIME_MS) {
    throw new TokenInputError(errors.TOKEN_EXPIRES_IN_INVALID, 'expiresIn', EXPIRES_IN_REASON)
  }
  return ms
}

/** A token's own limit, `COUNT/WINDOW` as --rate-limit takes it; null or undefined: none of its own. */
export function rateLimitOf(value: string | null | undefined): RateLimit | null {
  if (value === undefined || value === null) return null
  const limit = parseRateLimit(value)
  if (limit === null)
    throw new TokenInputError(errors.TOKEN_RATE_LIMIT_INVALID, 'rateLimit', RATE_LIMIT_REASON)
  return limit
}

/** How long a rolled-over secret keeps working, from `0s` (not at all) to 30 days; default 24 hours. */
export function overlapMs(value: string | undefined): number {
  if (value === undefined) return DEFAULT_OVERLAP_MS
  const ms = parseDuration(value, MAX_OVERLAP_MS)
  if (ms === null) throw new TokenInputError(errors.TOKEN_OVERLAP_INVALID, 'overlap', OVERLAP_REASON)
  return ms
}

export const TOKEN_ID_PATTERN = /^[0-9a-f]{16}$/

export const TOKENS_LIMIT_MAX = 500
export const TOKENS_LIMIT_DEFAULT = 50
/** What `after` looks like: `<creation in epoch ms>.<id>`, as the `Link` of the previous page gave it. */
export const TOKEN_CURSOR_PATTERN = '^(0|[1-9][0-9]{0,14})\\.([0-9a-f]{16})$'

export interface TokensQuery {
  limit: number
  after?: TokenCursor
}

/** A token's place in the listing, as the `after` of the page that follows it. */
export function tokenCursor(token: { createdAt: Date; id: string }): string {
  return `${token.createdAt.getTime()}.${token.id}`
}
