import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'
import type { Counting } from '../limits/counting.js'
import { LocalCounts } from '../limits/local-counts.js'
import { SharedCounts } from '../limits/shared-counts.js'
import type { RateLimitStore } from '../store/types.js'

/**
 * Counts a request against `key` (a token id, or a client address when no valid token was shown) and
 * throws the 429 when the window's allowance is spent. Authentication calls it once it knows which
 * key applies, so a client cannot guess tokens faster than its address's limit allows: every failed
 * verification is counted against its address. `own` is a token's own limit, which takes the place
 * of the limiter's; undefined, without a promise, when neither applies and nothing is counted.
 */
export type Limiter = (
  key: string,
  request?: FastifyRequest,
  own?: RateLimit | null,
) => Promise<Record<string, string> | undefined> | undefined

/** What a request is counted against: its token, or its address when it has no valid token. */
export const LIMIT_KEY_KINDS = ['token', 'address'] as const

export interface RateLimitHooks {
  /** Told each time a request is refused, with the kind of key it was counted against. */
  onLimited?: (kind: string) => void
  /** Told when the process starts counting alone because it cannot settle with the others. */
  onAlone?: (error: unknown) => void
  /** Told when it settles with the others again. */
  onShared?: () => void
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

/** The key a request was counted against, once it was admitted: given back if its response is a 304. */
const COUNTED = Symbol('rateLimitCounted')

declare module 'fastify' {
  interface FastifyRequest {
    [COUNTED]: string | undefined
  }
}

/** The plugin's store, over the process's counting (each child, one per limiter, shares it). */
function storeOver(counting: Counting): FastifyRateLimitStoreCtor {
  return class implements FastifyRateLimitStore {
    incr(
      key: string,
      done: (error: Error | null, result: { current: number; ttl: number }) => void,
      windowMs: number,
      max: number,
    ) {
      const counted = counting.count(key, windowMs, max)
      if (counted instanceof Promise) counted.then((result) => done(null, result))
      else done(null, counted)
    }

    child(): FastifyRateLimitStore {
      return this
    }
  }
}

/** The limiters a request is counted by: its token's, and its address's when it has no valid token. */
export interface Limiters {
  token?: Limiter
  address?: Limiter
}

/**
 * Installs the limiters of the limits given (null or absent: that kind of request is not limited).
 * The token limiter is there even without a service-wide limit, as any token may carry its own; a
 * token with neither costs nothing.
 * They share one counting, each key naming its kind: this process's own, or, given `shared`, one
 * settled with every process on the database (limits/shared-counts.ts), so that a limit holds across
 * instances and workers. SQLite gives none: its service is one instance, and the counts' writes
 * would queue on the file's one writer with the group commits of creates, so each of its workers
 * counts alone. A request whose response is a 304 is given back: a client revalidating what
 * it holds is not held to the limit for it.
 */
export async function installRateLimits(
  app: FastifyInstance,
  limits: { token?: RateLimit | null; address?: RateLimit | null },
  hooks: RateLimitHooks = {},
  shared?: RateLimitStore,
): Promise<Limiters> {
  const counting: Counting = shared
    ? new SharedCounts(shared, { onAlone: hooks.onAlone, onShared: hooks.onShared })
    : new LocalCounts()
  app.addHook('onClose', () => counting.close())
  await app.register(rateLimit, { global: false, store: storeOver(counting) })
  app.decorateRequest(COUNTED, undefined)
  const giveBackOn304: onSendHookHandler = (request, reply, payload, done) => {
    const key = request[COUNTED]
    if (key !== undefined && reply.statusCode === 304) {
      counting.giveBack(key)
      const remaining = reply.getHeader('ratelimit-remaining')
      const limit = reply.getHeader('ratelimit-limit')
      if (remaining !== undefined && limit !== undefined)
        reply.header('ratelimit-remaining', String(Math.min(Number(limit), Number(remaining) + 1)))
    }
    done(null, payload)
  }
  // Only a GET or a HEAD responds 304: the other routes have no hook to run.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (methods.includes('GET') || methods.includes('HEAD'))
      route.onSend = [route.onSend ?? []].flat().concat(giveBackOn304)
  })
  return {
    token: limiter(app, limits.token ?? null, hooks),
    address: limits.address ? limiter(app, limits.address, hooks) : undefined,
  }
}

const countedOf = (request: FastifyRequest) => request as unknown as Counted

function limiter(app: FastifyInstance, fallback: RateLimit | null, hooks: RateLimitHooks): Limiter {
  // One limiter for every limit: each count carries its own, so a token's limit needs no limiter of
  // its own, and its counts go through the same counting as every other key's.
  const check = app.createRateLimit({
    max: (request) => countedOf(request).limit.max,
    timeWindow: (request) => countedOf(request).limit.windowMs,
    keyGenerator: (request) => countedOf(request).key,
  })
  return (key, request, own) => {
    const limit = own ?? fallback
    return limit === null ? undefined : count(key, limit, request)
  }

  async function count(
    key: string,
    limit: RateLimit,
    request: FastifyRequest | undefined,
  ): Promise<Record<string, string> | undefined> {
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
    if (!result.isExceeded) {
      if (request) request[COUNTED] = key
      return headers
    }
    hooks.onLimited?.(key.slice(0, key.indexOf(':')))
    const retryAfter = String(Math.max(1, result.ttlInSeconds))
    throw new AppError(
      errors.RATE_LIMITED,
      `Too many requests: at most ${limit.max} per ${limit.windowMs / 1000}s; retry after ${retryAfter}s.`,
      { ...headers, 'retry-after': retryAfter },
    )
  }
}
