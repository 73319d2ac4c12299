import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'
import { queryLimit, queryParams, queryValue, requireBody } from '../plants/validate.js'
import type { Scope } from './scopes.js'
import {
  TOKEN_CURSOR_PATTERN,
  TOKEN_ID_PATTERN,
  TOKENS_LIMIT_DEFAULT,
  TOKENS_LIMIT_MAX,
  TokenInputError,
  type TokensQuery,
  validateExpiresIn,
  validateOverlap,
  validateRateLimit,
  validateScopes,
  validateTokenName,
} from './validate.js'

// The bodies, paths and queries of the /tokens operations, read with the rules `token create` shares.
// Apart from validate.ts so that the CLI does not load the JSON and query readers it has no use for.

const TOKEN_CURSOR = new RegExp(TOKEN_CURSOR_PATTERN)

export interface NewTokenInput {
  name: string
  scopes: Scope[]
  /** Absent: the token never expires. */
  expiresInMs?: number
  rateLimit: RateLimit | null
}

/** The body of POST /tokens: `{name, scopes, expiresIn?, rateLimit?}`. Unknown fields are ignored. */
export function validateNewToken(body: unknown): NewTokenInput {
  const record = requireBody(body)
  // Over HTTP the scopes are always said: a default would grant what the caller did not name.
  if (record.scopes === undefined) {
    throw new TokenInputError(errors.TOKEN_SCOPES_INVALID, 'scopes', 'it is required')
  }
  const input: NewTokenInput = {
    name: validateTokenName(record.name),
    scopes: validateScopes(record.scopes),
    rateLimit: validateRateLimit(record.rateLimit),
  }
  const expiresInMs = validateExpiresIn(record.expiresIn)
  if (expiresInMs !== undefined) input.expiresInMs = expiresInMs
  return input
}

/** The body of POST /tokens/{id}/roll: `{overlap?}`. */
export function validateRoll(body: unknown): { overlapMs: number } {
  return { overlapMs: validateOverlap(requireBody(body).overlap) }
}

/** A path id that cannot be a token's is simply not found, as a revoked-and-swept one is. */
export function validateTokenParams(params: unknown): { id: string } {
  const { id } = params as { id?: unknown }
  if (typeof id !== 'string' || !TOKEN_ID_PATTERN.test(id)) throw new AppError(errors.TOKEN_NOT_FOUND)
  return { id }
}

/** The token listing's query: limit and cursor, each refusal 40012 in words, as other listings'. */
export function validateTokensQuery(query: unknown): TokensQuery {
  const raw = queryParams(query)
  const result: TokensQuery = { limit: queryLimit(raw, TOKENS_LIMIT_MAX, TOKENS_LIMIT_DEFAULT) }
  const after = queryValue(raw, 'after')
  if (after !== undefined) {
    const match = TOKEN_CURSOR.exec(after)
    if (!match) {
      throw new AppError(
        errors.QUERY_INVALID,
        'The query parameter after must be the cursor given in the `Link` header of the previous page.',
      )
    }
    result.after = { createdAt: new Date(Number(match[1])), id: match[2] as string }
  }
  return result
}
