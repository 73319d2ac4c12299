import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'

/**
 * Counts a request against `key` (a token id, or a client address when no valid token was shown) and
 * throws the 429 when the window's allowance is spent. Authentication calls it once it knows which
 * key applies, so a client cannot guess tokens faster than its address's limit allows: every failed
 * verification is counted against its address. `own` is a token's own limit, which takes the place
 * of the limiter's; undefined, without a promise, when neither applies and nothing is counted.
 */
export type Limiter = (
  key: string,
  own?: RateLimit | null,
) => Promise<Record<string, string> | undefined> | undefined

/** What a request is counted against: its token, or its address when it has no valid token. */
export const LIMIT_KEY_KINDS = ['token', 'address'] as const

export interface RateLimitHooks {
  /** Told each time a request is refused, with the kind of key it was counted against. */
  onLimited?: (kind: string) => void
}

const BRACKETED = /^\[([^\]]*)\](?::[0-9]*)?$/
const IPV4_WITH_PORT = /^([0-9.]+):[0-9]*$/

/**
 * The key a request without a valid token is counted under: its client's address. An IPv6 host is
 * handed a whole /64 (RFC 6177) and may send from any address in it, so the /64 is the client, or
 * it would escape the limit by inventing addresses as it would by inventing tokens. A proxy may write
 * X-Forwarded-For with the client's port (its own per connection), in brackets, or IPv4 mapped into
 * IPv6: each names the same client.
 */
export function addressKey(ip: string | undefined): string {
  if (ip === undefined) return 'address:'
  const address = (BRACKETED.exec(ip)?.[1] ?? IPV4_WITH_PORT.exec(ip)?.[1] ?? ip).replace(/%.*$/, '')
  if (!ipaddr.isValid(address)) return `address:${ip}`
  // An IPv4 address mapped into IPv6 comes out as the IPv4 address itself.
  const parsed = ipaddr.process(address)
  if (parsed.kind() === 'ipv4') return `address:${parsed.toString()}`
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16))
  return `address:${prefix.join(':')}::/64`
}

/** What the plugin is handed to count: the key, and the limit that applies to it. */
interface Counted {
  key: string
  limit: RateLimit
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

/** The limiters a request is counted by: its token's, and its address's when it has no valid token. */
export interface Limiters {
  token?: Limiter
  address?: Limiter
}

/**
 * Installs the limiters of the limits given (null or absent: that kind of request is not limited).
 * They share one set of counters, each key naming its kind. The token limiter is there even without
 * a service-wide limit, as any token may carry its own; a token with neither costs nothing.
 */
export async function installRateLimits(
  app: FastifyInstance,
  limits: { token?: RateLimit | null; address?: RateLimit | null },
  hooks: RateLimitHooks = {},
): Promise<Limiters> {
  await app.register(rateLimit, { global: false, store: Counters })
  return {
    token: limiter(app, limits.token ?? null, hooks),
    address: limits.address ? limiter(app, limits.address, hooks) : undefined,
  }
}

const countedOf = (request: FastifyRequest) => request as unknown as Counted

function limiter(app: FastifyInstance, fallback: RateLimit | null, hooks: RateLimitHooks): Limiter {
  // One limiter for every limit: each count carries its own, so a token's limit needs no limiter of
  // its own, and its counts go through the same counters as every other key's.
  const check = app.createRateLimit({
    max: (request) => countedOf(request).limit.max,
    timeWindow: (request) => countedOf(request).limit.windowMs,
    keyGenerator: (request) => countedOf(request).key,
  })
  return (key, own) => {
    const limit = own ?? fallback
    return limit === null ? undefined : count(key, limit)
  }

  async function count(key: string, limit: RateLimit): Promise<Record<string, string> | undefined> {
    // The plugin reads the key through keyGenerator and a route's group from routeOptions: a counted
    // key is all it is given, since which key applies is known only once the token is checked.
    const result = await check({ key, limit, routeOptions: NO_ROUTE } as unknown as FastifyRequest)
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
