import type { JwtSettings } from './jwt.js'
import type { Principal } from './service.js'

/** What authentication asks of whatever checks bearer tokens (the TokenService, or it and JWTs). */
export interface BearerVerifier {
  /** The principal without a promise when known at once; undefined when `verify` must be awaited. */
  verifyCached(token: string): Principal | undefined
  /** Resolves to the token's principal, or throws the 401 AppError that says why not. */
  verify(token: string): Promise<Principal>
}

/**
 * A JWT in compact form: three base64url parts, header, payload and signature (empty for `alg: none`,
 * which is refused for it). An opaque token (`pst_…`) never holds a dot, so the two never overlap.
 */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export function isJwtShaped(token: string): boolean {
  return JWT_SHAPE.test(token)
}

/**
 * The identity provider's keys could not be fetched (unreachable, too slow, or not a key set): not the
 * client's fault, so the request is answered 503 with Retry-After, as when the database is unreachable.
 */
export class KeysUnavailableError extends Error {
  override name = 'KeysUnavailableError'
  /** The provider's HTTP status, when it answered with one other than 200. */
  readonly status: number | undefined

  /** `reason` is short and of this side's words: it is logged, and never quotes the provider. */
  constructor(reason: string, options: { status?: number } = {}) {
    super(reason)
    this.status = options.status
  }
}

/** Opaque tokens go to `tokens`, JWT-shaped ones to `jwts`; each answers for its own kind alone. */
export function withJwts(tokens: BearerVerifier, jwts: BearerVerifier): BearerVerifier {
  return {
    verifyCached: (token) => (isJwtShaped(token) ? jwts.verifyCached(token) : tokens.verifyCached(token)),
    verify: (token) => (isJwtShaped(token) ? jwts.verify(token) : tokens.verify(token)),
  }
}

/**
 * The JWT verifier for these settings (jwt.ts), loaded only when called: jose and the verifier are
 * no part of a process that does not accept JWTs.
 */
export async function loadJwtVerifier(settings: JwtSettings): Promise<BearerVerifier> {
  const { createJwtVerifier } = await import('./jwt.js')
  return createJwtVerifier(settings)
}
