import type { RateLimit } from '../config.js'
import type { Scope } from './scopes.js'
import { expiresInMs, rateLimitOf, scopesOf, type TokensQuery, tokenName } from './validate.js'

// The bodies and queries of the /tokens operations as their schemas leave them, read into what the
// token service takes with the rules `token create` shares.

/** A NewToken body as its schema leaves it. */
export interface NewTokenBody {
  name: string
  scopes: Scope[]
  expiresIn?: string | null
  rateLimit?: string | null
}

export interface NewTokenInput {
  name: string
  scopes: Scope[]
  /** Absent: the token never expires. */
  expiresInMs?: number
  rateLimit: RateLimit | null
}

/** The token a NewToken body asks for. */
export function newTokenInput(body: NewTokenBody): NewTokenInput {
  const input: NewTokenInput = {
    name: tokenName(body.name),
    scopes: scopesOf(body.scopes),
    rateLimit: rateLimitOf(body.rateLimit),
  }
  const lifetime = expiresInMs(body.expiresIn)
  if (lifetime !== undefined) input.expiresInMs = lifetime
  return input
}

/** The token listing's query, its cursor (the schema's pattern) read as the place it names. */
export function tokensQuery(query: { limit: number; after?: string }): TokensQuery {
  const result: TokensQuery = { limit: query.limit }
  if (query.after !== undefined) {
    const [ms, id] = query.after.split('.')
    result.after = { createdAt: new Date(Number(ms)), id: id as string }
  }
  return result
}
