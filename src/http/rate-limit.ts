import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
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

/**
 * In-process counters (several instances each count their own share), each window timed on the
 * monotonic clock. The plugin's own store times them by the wall clock: a step back (NTP, a resumed
 * VM) put a window's start in the future, so the count did not start again until the clock had
 * caught up, and a client that had spent its allowance was refused for as long as the step.
 */
class Counters implements FastifyRateLimitStore {
  /** In the order last counted, so the first is the one counted longest ago. */
  private readonly windows = new Map<string, { count: number; startedAt: number }>()

  incr(
    key: string,
    done: (error: Error | null, result: { current: number; ttl: number }) => void,
    windowMs: number,
  ) {
    const now = performance.now()
    let window = this.windows.get(key)
    this.windows.delete(key)
    if (window === undefined || now - window.startedAt >= windowMs) window = { count: 0, startedAt: now }
    window.count += 1
    this.windows.set(key, window)
    if (this.windows.size > MAX_COUNTED_KEYS) {
      const oldest = this.windows.keys().next().value
      if (oldest !== undefined) this.windows.delete(oldest)
    }
    done(null, { current: window.count, ttl: windowMs - (now - window.startedAt) })
  }

  child(): FastifyRateLimitStore {
    return new Counters()
  }
}

export async function installRateLimit(
  app: FastifyInstance,
  limit: RateLimit,
  hooks: RateLimitHooks = {},
): Promise<Limiter> {
  await app.register(rateLimit, { global: false, store: Counters })
  const check = app.createRateLimit({
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
