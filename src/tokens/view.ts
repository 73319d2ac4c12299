import { formatRateLimit } from '../rate-limit-text.js'
import type { TokenRecord } from '../store/types.js'

// A token as it is shown, by `token list --json` and over HTTP alike: never its secret nor any hash.

export type TokenStatus = 'active' | 'expired' | 'revoked'

export function tokenStatus(token: TokenRecord, now: number): TokenStatus {
  if (token.revokedAt) return 'revoked'
  if (token.expiresAt && token.expiresAt.getTime() <= now) return 'expired'
  return 'active'
}

/**
 * Until when the secret the last roll replaced is still accepted; null when no overlap is running. It
 * ends with the token: at its expiry or revocation, whichever comes first.
 */
export function previousSecretUntil(token: TokenRecord, now: number): Date | null {
  const until = token.previousSecretExpiresAt
  if (until === null || token.previousSecretHash === null || tokenStatus(token, now) !== 'active') return null
  if (until.getTime() <= now) return null
  return token.expiresAt && token.expiresAt < until ? token.expiresAt : until
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

export function tokenView(token: TokenRecord, now: number) {
  return {
    id: token.id,
    name: token.name,
    prefix: `pst_${token.id}_`,
    scopes: token.scopes,
    createdAt: token.createdAt.toISOString(),
    expiresAt: iso(token.expiresAt),
    lastUsedAt: iso(token.lastUsedAt),
    revokedAt: iso(token.revokedAt),
    status: tokenStatus(token, now),
    rateLimit: token.rateLimit ? formatRateLimit(token.rateLimit) : null,
    previousSecretExpiresAt: iso(previousSecretUntil(token, now)),
    createdBy: token.createdBy ?? null,
  }
}

export type TokenView = ReturnType<typeof tokenView>
