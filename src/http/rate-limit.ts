import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'

/**
 * Counts a request against `key` (a token id, or a client address when no valid token was shown) and
 * throws the 429 when the window's allowance is spent. Authentication calls it once it knows which
 * key applies, so a client cannot escape its token's limit by inventing tokens: every failed
 * verification is counted against its address instead.
 */
export type Limiter = (request: FastifyRequest, reply: FastifyReply, key: string) => Promise<void>

export interface RateLimitHooks {
  /** Told each time a request is refused, with the kind of key it was counted against. */
  onLimited?: (kind: string) => void
}

export async function installRateLimit(
  app: FastifyInstance,
  limit: RateLimit,
  hooks: RateLimitHooks = {},
): Promise<Limiter> {
  const keys = new WeakMap<FastifyRequest, string>()
  // In-process counters (an LRU of this many keys); several instances each count their own share.
  await app.register(rateLimit, { global: false, cache: 20_000 })
  const check = app.createRateLimit({
    max: limit.max,
    timeWindow: limit.windowMs,
    keyGenerator: (request) => keys.get(request) ?? request.ip,
  })
  return async (request, reply, key) => {
    keys.set(request, key)
    const result = await check(request)
    if (result.isAllowed) return
    // IETF draft RateLimit header fields: the limit, what is left, and seconds until the window resets.
    reply.header('ratelimit-limit', result.max)
    reply.header('ratelimit-remaining', result.remaining)
    reply.header('ratelimit-reset', result.ttlInSeconds)
    if (!result.isExceeded) return
    hooks.onLimited?.(key.slice(0, key.indexOf(':')))
    const retryAfter = String(Math.max(1, result.ttlInSeconds))
    throw new AppError(
      errors.RATE_LIMITED,
      `Too many requests: at most ${limit.max} per ${limit.windowMs / 1000}s; retry after ${retryAfter}s.`,
      { 'retry-after': retryAfter },
    )
  }
}
