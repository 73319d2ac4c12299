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
  return { ...newSecretFor(publicId), publicId }
}

/** A new secret for the token `publicId` (a roll keeps the id, so the token stays the same one). */
export function newSecretFor(publicId: string): { token: string; secretHash: string } {
  const secret = randomBytes(32).toString('base64url')
  return { token: `${PREFIX}${publicId}_${secret}`, secretHash: hashSecret(secret) }
}

export function parseToken(token: string): ParsedToken | null {
  const match = TOKEN_SHAPE.exec(token)
  return match ? { publicId: match[1] as string, secret: match[2] as string } : null
}

/** Whether a token, secret and all, appears anywhere in the text. */
export function holdsToken(text: string): boolean {
  return TOKEN_WITHIN.test(text)
}

/**
 * A token wherever it sits in a text that field paths cannot name: a URL that carries it in its query
 * or path (any of its prefix's characters may come percent-encoded, in either case), an error message
 * quoting a header. The public id, which `token list` shows anyway, is kept so the text still says
 * which token it was.
 */
const TOKEN_IN_TEXT =
  /(?:p|%[57]0)(?:s|%[57]3)(?:t|%[57]4)(?:_|%5f)(?:([0-9a-f]{16})(?:_|%5f))?[A-Za-z0-9_%-]+/gi

/**
 * A bare secret: 43 base64url characters standing alone (no such character on either side), in both
 * cases, as 32 random bytes all but always are. A path or a name of that length is seldom mixed case.
 */
const SECRET_SHAPED = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g
const hidden = (run: string) => (/[A-Z]/.test(run) && /[a-z]/.test(run) ? '[redacted]' : run)

/**
 * A JWT (the identity provider's bearer tokens): a JSON header in base64url (`{"` reads `eyJ`,
 * `{ ` reads `eyA`), then payload and signature, the dots perhaps percent-encoded in a URL. The whole
 * of it goes: header and payload are no secret, but a JWT cut short of its signature would still
 * say whose access it was, and what is left would need a rule of its own.
 */
const JWT_IN_TEXT =
  /(?<![A-Za-z0-9_-])ey[A-Za-z0-9_-]{8,}(?:\.|%2[Ee])[A-Za-z0-9_-]+(?:\.|%2[Ee])[A-Za-z0-9_-]*/g

/**
 * `text` as it may be logged or sent back: every JWT replaced, every token cut to its public id,
 * and every bare secret replaced.
 */
export function hideSecrets(text: string): string {
  return text
    .replace(JWT_IN_TEXT, '[redacted]')
    .replace(TOKEN_IN_TEXT, (_, id?: string) => (id ? `pst_${id}_[redacted]` : 'pst_[redacted]'))
    .replace(SECRET_SHAPED, hidden)
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return presented.length === stored.length && timingSafeEqual(presented, stored)
}
