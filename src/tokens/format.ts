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

/**
 * A token wherever it sits in a text that field paths cannot name: a URL that carries it in its query
 * or path (any of its prefix's characters may come percent-encoded, in either case), an error message
 * quoting a header. The public id, which `token list` shows anyway, is kept so the text still says
 * which token it was.
 */
const TOKEN_IN_TEXT =
  /(?:p|%[57]0)(?:s|%[57]3)(?:t|%[57]4)(?:_|%5f)(?:([0-9a-f]{16})(?:_|%5f))?[A-Za-z0-9_%-]+/gi

/**
 * A bare secret, or anything long enough to hold one: a run of at least a secret's 43 base64url
 * characters (or their percent-encodings). Nothing the service writes of its own is such a run; what
 * a client sends may be, anywhere in a URL or a header.
 */
const SECRET_SHAPED = /[A-Za-z0-9_%-]{43,}/g

/**
 * `text` as it may be logged or sent back: every token cut to its public id, and every run that could
 * be a bare secret replaced.
 */
export function hideSecrets(text: string): string {
  return text
    .replace(TOKEN_IN_TEXT, (_, id?: string) => (id ? `pst_${id}_[redacted]` : 'pst_[redacted]'))
    .replace(SECRET_SHAPED, '[redacted]')
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex')
  const stored = Buffer.from(storedHash, 'hex')
  return presented.length === stored.length && timingSafeEqual(presented, stored)
}
