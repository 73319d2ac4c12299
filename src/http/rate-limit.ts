import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'

/**
 * Counts a request against `key` (a token id, or a client address when no valid token was shown) and
 * throws the 429 when the window's allowance is spent. Authentication calls it once it knows which
 * key applies, so a client cannot escape its token's limit by inventing tokens: every failed
 * verification is counted against its address instead.
 */
export type Limiter = (key: string) => Promise<Record<string, string> | undefined>

/** What a request is counted against: its token, or its address when it has no valid token. */
export const LIMIT_KEY_KINDS = ['token', 'address'] as const

export interface RateLimitHooks {
  /** Told each time a request is refused, with the kind of key it was counted against. */
  onLimited?: (kind: string) => void
}

interface Counted {
  key: string
}

const NO_ROUTE = { config: {} }

/** Tokens and addresses counted at once; past this the one counted longest ago is forgotten. */
const MAX_COUNTED_KEYS = 20_000

export async function installRateLimit(
  app: FastifyInstance,
  limit: RateLimit,
  hooks: RateLimitHooks = {},
): Promise<Limiter> {
  await app.register(rateLimit, { global: false })
  // In-process counters (an LRU of this many keys); several instances each count their own share.
  // Given to the limiter, not at registration: createRateLimit makes a store of its own, sized by its
  // options alone, so a size given to the plugin left it at the default of 5,000 keys. The plugin's
  // types leave `cache` out of these options, which it reads all the same.
  const counters = { cache: MAX_COUNTED_KEYS }
  const check = app.createRateLimit({
    ...counters,
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (counted) => (counted as unknown as Counted).key,
  })
  return async (key) => {
    // The plugin reads the key through keyGenerator and a route's group from routeOptions: a counted
    // key is all it is given, so the create fast lane can count without a Fastify request.
    const result = await check({ key, routeOptions: NO_ROUTE } as unknown as FastifyRequest)
    if (result.isAllowed) return undefined
    // IETF draft RateLimit header fields: the limit, what is left, and seconds until the window resets.
    const headers: Record<string, string> = {
      'ratelimit-limit': String(result.max),
      'ratelimit-remaining': String(result.remaining),
      'ratelimit-reset': String(result.ttlInSeconds),
    }
    if (!result.isExceeded) return headers
    hooks.onLimited?.(key.slice(0, key.indexOf(':')))
    const retryAfter = String(Math.max(1, result.ttlInSeconds))
    throw new AppError(
      errors.RATE_LIMITED,
      `Too many requests: at most ${limit.max} per ${limit.windowMs / 1000}s; retry after ${retryAfter}s.`,
      { ...headers, 'retry-after': retryAfter },
    )
  }
}
