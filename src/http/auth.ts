import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError, errors } from '../errors.js'
import type { Scope } from '../tokens/scopes.js'
import type { Principal, TokenService } from '../tokens/service.js'
import type { Limiter } from './rate-limit.js'

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

function challenge(entry: typeof errors.TOKEN_MISSING, tokenSent: boolean): AppError {
  // RFC 6750 §3: no error attribute when no credentials were sent at all.
  const header = tokenSent ? `${REALM}, error="invalid_token", error_description="${entry.message}"` : REALM
  return new AppError(entry, entry.message, { 'www-authenticate': header })
}

const noLimit: Limiter = async () => {}

/**
 * Adds bearer authentication to every route registered in this plugin scope. It runs in onRequest,
 * before any body is read, so a rejected request costs no parsing and writes nothing. Each request is
 * counted by `limit` against its token, or against its client address when it shows no valid token.
 */
export function requireBearer(app: FastifyInstance, tokens: TokenService, limit: Limiter = noLimit): void {
  app.decorateRequest('principal', undefined)
  app.addHook('onRequest', async (request: FastifyRequest, reply) => {
    const byAddress = () => limit(request, reply, `address:${request.ip}`)
    if (request.routeOptions.config.public) return byAddress()
    reply.header('cache-control', 'no-store')
    const header = request.headers.authorization
    if (header === undefined) {
      await byAddress()
      throw challenge(errors.TOKEN_MISSING, false)
    }
    const match = BEARER.exec(header)
    if (!match) {
      await byAddress()
      throw challenge(errors.TOKEN_MALFORMED, true)
    }
    let principal: Principal
    try {
      principal = await tokens.verify(match[1] as string)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      await byAddress()
      throw challenge(error.entry, true)
    }
    await limit(request, reply, `token:${principal.tokenId}`)
    const scope = request.routeOptions.config.scope
    if (scope && !principal.scopes.has(scope)) {
      throw new AppError(errors.SCOPE_MISSING, `This operation needs a token with the scope ${scope}.`, {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"`,
      })
    }
    request.principal = principal
  })
}
