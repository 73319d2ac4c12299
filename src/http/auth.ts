import type {
  FastifyContextConfig,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onRequestHookHandler,
} from 'fastify'
import type { RateLimit } from '../config.js'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { type BearerVerifier, KeysUnavailableError } from '../tokens/bearer.js'
import type { Scope } from '../tokens/scopes.js'
import type { Principal } from '../tokens/service.js'
import { addressKey, type Limiter, type Limiters } from './rate-limit.js'

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined
  }
  interface FastifyContextConfig {
    /** The scope a token needs for this route; routes without one only need a valid token. */
    scope?: Scope
    /** Routes that answer before authentication (405s). */
    public?: boolean
    /**
     * For a route that also takes another credential (a stream ticket in the query): its principal when
     * the request carries one, else undefined, and the request needs a bearer token as any other.
     */
    otherCredential?: (request: FastifyRequest) => Promise<Principal> | undefined
  }
}

const REALM = 'Bearer realm="plantstore"'
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i
// A tab after the scheme name is no separator (RFC 9110 §11.4), but the client did send Bearer
// credentials: they are malformed ones, not none.
const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i

/** The token of an `Authorization: Bearer …` header; undefined when absent or not of that form. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  return BEARER.exec(header)?.[1]
}

function challenge(entry: typeof errors.TOKEN_MISSING, tokenSent: boolean): AppError {
  // RFC 6750 §3: no error attribute when no credentials were sent at all.
  const header = tokenSent ? `${REALM}, error="invalid_token", error_description="${entry.message}"` : REALM
  return new AppError(entry, entry.message, { 'www-authenticate': header })
}

/**
 * Adds bearer authentication to every route registered in this plugin scope, as a hook of each route's
 * own that knows from the start whether the route is public and which scope it needs. It runs in onRequest,
 * before any body is read, so a rejected request costs no parsing and writes nothing. A request with a
 * valid token is counted against that token by `limits.token`, one without against its client address
 * by `limits.address` (when each is set). A token verified before is recognised without a promise:
 * with no limit (the service's or the token's own), the common request passes this hook synchronously.
 */
export function requireBearer(app: FastifyInstance, tokens: BearerVerifier, limits: Limiters = {}): void {
  app.decorateRequest('principal', undefined)
  const { token: byToken, address: byAddress } = limits

  /** Counts the request against `key` when `limit` applies; the headers it gives go on the response. */
  function counted(
    limit: Limiter | undefined,
    key: string,
    request: FastifyRequest,
    reply: FastifyReply,
    own?: RateLimit | null,
  ): Promise<void> | undefined {
    return limit?.(key, request, own)?.then((headers) => {
      if (headers) reply.headers(headers)
    })
  }

  function refuse(error: Error, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const pending = counted(byAddress, addressKey(request.ip), request, reply)
    if (!pending) throw error
    return pending.then(() => {
      throw error
    })
  }

  function refuseUnverified(error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Keys that cannot be had refuse a token unverified too: counted, or garbage JWTs sent through
    // an outage of the provider would escape the address's limit.
    if (error instanceof KeysUnavailableError) return refuse(error, request, reply)
    if (!(error instanceof AppError)) throw error
    return refuse(challenge(error.entry, true), request, reply)
  }

  function admit(
    principal: Principal,
    scope: Scope | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> | undefined {
    // A token's own limit, when it has one, takes the place of the service-wide one.
    const pending = counted(byToken, `token:${principal.tokenId}`, request, reply, principal.rateLimit)
    if (pending) return pending.then(() => authorize(request, principal, scope))
    authorize(request, principal, scope)
    return undefined
  }

  /** Undefined when decided at once; a promise when the store or the limiter must be awaited. */
  function authenticate(
    scope: Scope | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> | undefined {
    reply.header('cache-control', 'no-store')
    const header = request.headers.authorization
    if (header === undefined) return refuse(challenge(errors.TOKEN_MISSING, false), request, reply)
    const token = bearerToken(header)
    if (token === undefined) {
      // RFC 6750 §3.1: credentials of another scheme (Basic, …) are no bearer token at all, and get
      // the bare challenge; a Bearer header without a usable token is a malformed one.
      if (!BEARER_SCHEME.test(header)) return refuse(challenge(errors.TOKEN_MISSING, false), request, reply)
      return refuse(challenge(errors.TOKEN_MALFORMED, true), request, reply)
    }
    let principal: Principal | undefined
    try {
      principal = tokens.verifyCached(token)
    } catch (error) {
      return refuseUnverified(error, request, reply)
    }
    if (principal) return admit(principal, scope, request, reply)
    return tokens.verify(token).then(
      (verified) => admit(verified, scope, request, reply),
      (error: unknown) => refuseUnverified(error, request, reply),
    )
  }

  /** The route's own hook: whether it is public and the scope it needs are known from the start. */
  function hookFor(config: FastifyContextConfig | undefined): onRequestHookHandler {
    const other = config?.otherCredential
    const check: (request: FastifyRequest, reply: FastifyReply) => Promise<void> | undefined = config?.public
      ? (request, reply) => counted(byAddress, addressKey(request.ip), request, reply)
      : other
        ? (request, reply) =>
            other(request)?.then(
              (principal) => admit(principal, config?.scope, request, reply),
              (error: unknown) => refuseUnverified(error, request, reply),
            ) ?? authenticate(config?.scope, request, reply)
        : (request, reply) => authenticate(config?.scope, request, reply)
    return (request, reply, done) => {
      let pending: Promise<void> | undefined
      try {
        pending = check(request, reply)
      } catch (error) {
        done(error as Error)
        return
      }
      if (pending) pending.then(() => done(), done)
      else done()
    }
  }

  app.addHook('onRoute', (route) => {
    route.onRequest = [route.onRequest ?? []].flat().concat(hookFor(route.config))
  })
}

function authorize(request: FastifyRequest, principal: Principal, scope: Scope | undefined): void {
  if (scope && !principal.scopes.has(scope)) {
    throw insufficientScope(
      errors.SCOPE_MISSING,
      [scope],
      `This operation needs a token with the scope ${scope}.`,
    )
  }
  request.principal = principal
}

/** A 403 for a request that needs `scopes`, which the token lacks, with RFC 6750's challenge. */
export function insufficientScope(
  entry: CatalogEntry,
  scopes: readonly string[],
  message?: string,
): AppError {
  return new AppError(entry, message, {
    'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scopes.join(' ')}"`,
  })
}
