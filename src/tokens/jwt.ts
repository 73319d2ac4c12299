// Loaded only when --jwt-jwks-url is set (loadJwtVerifier in bearer.ts): jose is no part of
// a server without JWTs, nor of the CLI.
import { createHash } from 'node:crypto'
import {
  createLocalJWKSet,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyResult,
  errors as jose,
  jwtVerify,
} from 'jose'
import { setNewest } from '../bounded-map.js'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { type BearerVerifier, KeysUnavailableError } from './bearer.js'
import { SCOPES } from './scopes.js'
import type { Principal } from './service.js'

export interface JwtSettings {
  jwksUrl: string
  issuer: string
  audience: string
  /** The claim holding the scopes: a space-separated string (RFC 8693) or an array of strings. */
  scopeClaim: string
  clockToleranceMs: number
}

export interface JwtVerifierOptions {
  /**
   * After the key set was fetched, how long a token with an unknown `kid` waits before it may fetch
   * the set again, so that made-up kids cannot make the service hammer the provider.
   */
  cooldownMs?: number
  /**
   * After a failed fetch, how long before the next may be tried; it doubles with each failure in a
   * row, up to `failureCooldownMaxMs`, so an outage of the provider costs it a few fetches a minute.
   */
  failureCooldownMs?: number
  failureCooldownMaxMs?: number
  /** Longest wait for the key set; past it the request gets 503. */
  timeoutMs?: number
  /** Verified JWTs kept in memory; the oldest is dropped past this. */
  cacheSize?: number
}

/** Only asymmetric signatures: `none` proves nothing, and an HMAC key would be a secret the provider shares. */
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA']

/**
 * A verified JWT is remembered for at most this long (and never past its expiry), so that a key the
 * provider withdraws stops being accepted soon after jose's own key cache lets it go.
 */
const REMEMBERED_MS = 60_000

interface Remembered {
  principal: Principal
  /** exp plus the clock tolerance: from then on the token is expired. */
  expiresAt: number
  /** From then on the token is verified again. */
  recheckAt: number
}

/**
 * Verifies JWTs signed by a key of the identity provider's JSON Web Key Set: fetched on first use,
 * kept for 10 minutes, and fetched again when a token names a `kid` the cached set lacks (a key the
 * provider has just added), at most once per cooldown.
 */
export function createJwtVerifier(settings: JwtSettings, options: JwtVerifierOptions = {}): BearerVerifier {
  const cacheSize = options.cacheSize ?? 10_000
  const keySet = createKeySet(settings.jwksUrl, options)
  const keys: JWTVerifyGetKey = (header, token) => keySet.key(header, token)
  const verifyOptions = {
    algorithms: ALGORITHMS,
    issuer: settings.issuer,
    audience: settings.audience,
    requiredClaims: ['exp', 'sub'],
    clockTolerance: settings.clockToleranceMs / 1000,
  }
  const cache = new Map<string, Remembered>()

  async function verified(token: string): Promise<JWTVerifyResult> {
    try {
      return await jwtVerify(token, keys, verifyOptions)
    } catch (error) {
      // A set holding several keys that fit a token without a kid: the one that verifies it wins.
      if (!(error instanceof jose.JWKSMultipleMatchingKeys)) throw error
      for await (const key of error) {
        try {
          return await jwtVerify(token, key, verifyOptions)
        } catch (inner) {
          if (!(inner instanceof jose.JWSSignatureVerificationFailed)) throw inner
        }
      }
      throw new jose.JWSSignatureVerificationFailed()
    }
  }

  return {
    verifyCached(token) {
      const remembered = cache.get(token)
      if (!remembered) return undefined
      const at = Date.now()
      if (remembered.expiresAt <= at) {
        cache.delete(token)
        throw new AppError(errors.TOKEN_EXPIRED)
      }
      if (remembered.recheckAt <= at) {
        cache.delete(token)
        return undefined
      }
      return remembered.principal
    },

    async verify(token) {
      let payload: JWTPayload
      try {
        payload = (await verified(token)).payload
      } catch (error) {
        throw refusal(error)
      }
      if (typeof payload.sub !== 'string' || payload.sub === '')
        throw new AppError(errors.JWT_SUBJECT_MISSING)
      const principal: Principal = {
        tokenId: subjectKey(settings.issuer, payload.sub),
        name: payload.sub,
        scopes: scopesOf(payload[settings.scopeClaim]),
        // A JWT carries no limit of its own: the service-wide one applies.
        rateLimit: null,
        expiresAt: (payload.exp as number) * 1000,
        maker: { iss: settings.issuer, sub: payload.sub },
      }
      const at = Date.now()
      const remembered = {
        principal,
        expiresAt: (payload.exp as number) * 1000 + settings.clockToleranceMs,
        recheckAt: at + REMEMBERED_MS,
      }
      setNewest(cache, token, remembered, cacheSize)
      return principal
    },
  }
}

/**
 * What rate limits and Idempotency-Keys count a JWT's requests under: the same for every token of
 * the subject, fixed in length however long the subject is, and never a pst_ token's public id.
 */
export function subjectKey(issuer: string, subject: string): string {
  return `jwt_${createHash('sha256').update(`${issuer}\n${subject}`).digest('hex').slice(0, 32)}`
}

const KNOWN_SCOPES: ReadonlySet<string> = new Set(SCOPES)

/** The service's scopes named by the claim; other names (openid, profile, …) are not this service's. */
function scopesOf(claim: unknown): ReadonlySet<string> {
  const names = typeof claim === 'string' ? claim.split(/\s+/) : Array.isArray(claim) ? claim : []
  return new Set(names.filter((name): name is string => typeof name === 'string' && KNOWN_SCOPES.has(name)))
}

/** The 401 that says why jose refused the token; the key set's absence and anything unforeseen pass. */
function refusal(error: unknown): unknown {
  if (error instanceof KeysUnavailableError || !(error instanceof jose.JOSEError)) return error
  return new AppError(refusalEntry(error))
}

/** A claim jose found missing or failing its check (a claim of the wrong type is malformed). */
const CLAIM_REFUSALS: Record<string, CatalogEntry> = {
  nbf: errors.JWT_NOT_YET_VALID,
  iss: errors.JWT_ISSUER_WRONG,
  aud: errors.JWT_AUDIENCE_WRONG,
  sub: errors.JWT_SUBJECT_MISSING,
  exp: errors.JWT_EXPIRY_MISSING,
}

function refusalEntry(error: InstanceType<typeof jose.JOSEError>): CatalogEntry {
  if (error instanceof jose.JWTExpired) return errors.TOKEN_EXPIRED
  if (error instanceof jose.JWTClaimValidationFailed) {
    return (error.reason !== 'invalid' && CLAIM_REFUSALS[error.claim]) || errors.JWT_MALFORMED
  }
  if (error instanceof jose.JOSEAlgNotAllowed) return errors.JWT_ALGORITHM_REFUSED
  if (error instanceof jose.JWSSignatureVerificationFailed) return errors.JWT_SIGNATURE_INVALID
  if (error instanceof jose.JWKSNoMatchingKey || error instanceof jose.JWKSMultipleMatchingKeys) {
    return errors.JWT_KEY_UNKNOWN
  }
  // The rest is what jose says of the token's form: parts that do not decode, a header or claims
  // that are no JSON object, a `crit` it does not know, …
  return errors.JWT_MALFORMED
}

/** How long the key set is kept before the next JWT fetches it again. */
const KEY_SET_AGE_MS = 10 * 60_000

/** The provider answered with a status other than 200: its body is not read, let alone kept. */
class ProviderStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`)
  }
}

interface KeySet {
  key: JWTVerifyGetKey
}

/**
 * The provider's key set, fetched with at most one fetch in flight. A failed fetch is remembered
 * for a cool-down that doubles with each failure in a row: while it lasts, a request that needs the
 * set fetched is refused as unavailable at once, so that an outage of the provider, or tokens with
 * made-up kids sent during one, cost the provider a few fetches a minute rather than one each.
 * A set fetched within its age keeps serving the kids it holds through an outage.
 */
function createKeySet(url: string, options: JwtVerifierOptions): KeySet {
  const cooldownMs = options.cooldownMs ?? 30_000
  const timeoutMs = options.timeoutMs ?? 5_000
  const failureBaseMs = options.failureCooldownMs ?? 5_000
  const failureMaxMs = options.failureCooldownMaxMs ?? 60_000
  let local: JWTVerifyGetKey | undefined
  let fetchedAt = Number.NEGATIVE_INFINITY
  let pending: Promise<void> | undefined
  let failure: { until: number; delayMs: number; error: KeysUnavailableError } | undefined

  async function fetchSet(): Promise<void> {
    try {
      const response = await fetch(url, {
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
        headers: { accept: 'application/jwk-set+json, application/json' },
      })
      if (response.status !== 200) {
        await response.body?.cancel()
        throw new ProviderStatus(response.status)
      }
      local = createLocalJWKSet((await response.json()) as JSONWebKeySet)
      fetchedAt = Date.now()
      failure = undefined
    } catch (error) {
      const delayMs = failure ? Math.min(failure.delayMs * 2, failureMaxMs) : failureBaseMs
      failure = { until: Date.now() + delayMs, delayMs, error: unavailable(error) }
      throw failure.error
    }
  }

  /** Fetches the set, or joins the fetch under way; refused at once while a failure cools down. */
  function refresh(): Promise<void> {
    if (pending) return pending
    if (failure && Date.now() < failure.until) {
      const { error } = failure
      return Promise.reject(new KeysUnavailableError(error.message, { status: error.status }))
    }
    pending = fetchSet().finally(() => {
      pending = undefined
    })
    return pending
  }

  return {
    async key(header, token) {
      if (!local || Date.now() >= fetchedAt + KEY_SET_AGE_MS) await refresh()
      try {
        return await (local as JWTVerifyGetKey)(header, token)
      } catch (error) {
        // A kid the set lacks may be one the provider has just added: fetch again, cooldown allowing.
        if (!(error instanceof jose.JWKSNoMatchingKey) || Date.now() < fetchedAt + cooldownMs) throw error
        await refresh()
        return (local as JWTVerifyGetKey)(header, token)
      }
    },
  }
}

/**
 * A failed fetch as the log may say it: the status, or a short reason of this side's (a timeout, a
 * connection's error code, a body that is no key set). Never the provider's body or an error's
 * message, which can quote it.
 */
function unavailable(error: unknown): KeysUnavailableError {
  if (error instanceof ProviderStatus)
    return new KeysUnavailableError(error.message, { status: error.status })
  const name = (error as { name?: unknown }).name
  if (name === 'TimeoutError' || name === 'AbortError') return new KeysUnavailableError('timed out')
  if (error instanceof SyntaxError) return new KeysUnavailableError('not JSON')
  if (error instanceof jose.JWKSInvalid) return new KeysUnavailableError('not a JSON Web Key Set')
  const cause = (error as { cause?: { code?: unknown } }).cause
  const code =
    typeof cause?.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(cause.code) ? cause.code : undefined
  return new KeysUnavailableError(code ?? 'fetch failed')
}
