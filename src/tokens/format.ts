import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

// A token reads `pst_<public id>_<secret>`. The public id (16 hex characters) names the token in
// `token list` and `token revoke` and finds its row; the secret (32 random bytes, base64url) is shown
// once and only its SHA-256 is stored. A fast hash is right here: the secret has 256 bits of entropy,
// so there is nothing for a slow password hash to protect.

const PREFIX = 'pst_'
const TOKEN_TEXT = 'pst_([0-9a-f]{16})_([A-Za-z0-9_-]{43})'
const TOKEN_SHAPE = new RegExp(`^${TOKEN_TEXT}$`)
const TOKEN_WITHIN = new RegExp(TOKEN_TEXT)

export interface ParsedToken {
  publicId: string
  secret: string
}

export function generateToken(): { token: string; publicId: string; secretHash: string } {
  const publicId = randomBytes(8).toString('hex')
  const secret = randomBytes(32).toString('base64url')
  return { token: `${PREFIX}${publicId}_${secret}`, publicId, secretHash: hashSecret(secret) }
}

export function parseToken(token: string): ParsedToken | null {
  const match = TOKEN_SHAPE.exec(token)
  return match ? { publicId: match[1] as string, secret: match[2] as string } : null
}

/** Whether a token, secret and all, appears anywhere in the text. */
export function holdsToken(text: string): boolean {
  return TOKEN_WITHIN.test(text)
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return presented.length === stored.length && timingSafeEqual(presented, stored)
}
