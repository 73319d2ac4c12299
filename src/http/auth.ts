import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
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
 * Adds bearer authentication to every route registered in this plugin scope. It runs in onRequest,
 * before any body is read, so a rejected request costs no parsing and writes nothing. A request with a
 * valid token is counted against that token by `limits.token`, one without against its client address
 * by `limits.address` (when each is set). A token verified before is recognised without a promise:
 * with no limit (the service's or the token's own), the common request passes this hook synchronously.
 */
export function requireBearer(app: FastifyInstance, tokens: BearerVerifier, limits: Limiters = {}): void {
  app.decorateRequest('principal', undefined)

  /** Undefined when decided at once; a promise when the store or the limiter must be awaited. */
  function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    const counted = (
      limit: Limiter | undefined,
      key: string,
      own?: RateLimit | null,
    ): Promise<void> | undefined =>
      limit?.(key, request, own)?.then((headers) => {
        if (headers) reply.headers(headers)
      })
    const byAddress = () => counted(limits.address, addressKey(request.ip))
    const refuse = (error: Error): Promise<void> => {
      const counted = byAddress()
      if (!counted) throw error
      return counted.then(() => {
        throw error
      })
    }
    const refuseUnverified = (error: unknown): Promise<void> => {
      // Keys that cannot be had refuse a token unverified too: counted, or garbage JWTs sent through
      // an outage of the provider would escape the address's limit.
      if (error instanceof KeysUnavailableError) return refuse(error)
      if (!(error instanceof AppError)) throw error
      return refuse(challenge(error.entry, true))
    }
    const admit = (principal: Principal): Promise<void> | undefined => {
      // A token's own limit, when it has one, takes the place of the service-wide one.
      const pending = counted(limits.token, `token:${principal.tokenId}`, principal.rateLimit)
      if (pending) return pending.then(() => authorize(request, principal))
      authorize(request, principal)
      return undefined
    }

    if (request.routeOptions.config.public) return byAddress()
    reply.header('cache-control', 'no-store')
    const header = request.headers.authorization
    if (header === undefined) return refuse(challenge(errors.TOKEN_MISSING, false))
    const token = bearerToken(header)
    if (token === undefined) {
      // RFC 6750 §3.1: credentials of another scheme (Basic, …) are no bearer token at all, and get
      // the bare challenge; a Bearer header without a usable token is a malformed one.
      if (!BEARER_SCHEME.test(header)) return refuse(challenge(errors.TOKEN_MISSING, false))
      return refuse(challenge(errors.TOKEN_MALFORMED, true))
    }
    let principal: Principal | undefined
    try {
      principal = tokens.verifyCached(token)
    } catch (error) {
      return refuseUnverified(error)
    }
    if (principal) return admit(principal)
    return tokens.verify(token).then(admit, refuseUnverified)
  }

  app.addHook('onRequest', (request, reply, done) => {
    let pending: Promise<void> | undefined
    try {
      pending = authenticate(request, reply)
    } catch (error) {
      done(error as Error)
      return
    }
    if (pending) pending.then(() => done(), done)
    else done()
  })
}

function authorize(request: FastifyRequest, principal: Principal): void {
  const scope = request.routeOptions.config.scope
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
