import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'
import type { StreamTicketStore, TokenMaker, TokenStore } from '../store/types.js'
import type { Principal } from '../tokens/service.js'

/** How long a ticket opens streams: long enough to hand it to an EventSource, short in a URL's logs. */
export const TICKET_TTL_MS = 60_000

// `pst_tk_` + payload + `_` + signature: the `pst_` start makes log redaction (hideSecrets) hide it
// wherever it appears, as it hides a token.
const PREFIX = 'pst_tk_'
const SIGNATURE_LENGTH = 43
/** The name a ticket's principal goes by: the token's own would be readable in every URL that holds one. */
const TICKET_NAME = 'stream ticket'
const TICKET_SHAPE = /^pst_tk_([A-Za-z0-9_-]+)_([A-Za-z0-9_-]{43})$/

/**
 * What a ticket carries: the principal that asked for it, and when it stops opening streams. Anyone
 * holding the ticket can read it (the token's public id and scopes, never its name or secret); only
 * the service can make one.
 */
interface TicketClaims {
  /** The token's public id (or a JWT's subject key). */
  t: string
  s: string[]
  l: RateLimit | null
  /** The token's own expiry (ms since the epoch), or null. */
  x: number | null
  m: TokenMaker
  /** The ticket's expiry (ms since the epoch). */
  e: number
}

export interface IssuedTicket {
  ticket: string
  expiresAt: Date
}

/**
 * Stream tickets: what a browser's EventSource, which cannot send an Authorization header, puts in
 * the stream's URL instead of the token. A ticket is signed with a key kept in the database, so any
 * instance accepts one another issued, and nothing is stored per ticket.
 */
export class StreamTickets {
  private key: Promise<Buffer> | undefined

  constructor(
    private readonly store: StreamTicketStore,
    private readonly tokens: TokenStore,
    private readonly now: () => number = Date.now,
  ) {}

  async issue(principal: Principal): Promise<IssuedTicket> {
    // Read from the store, not this instance's cache: a token another instance has just revoked gets
    // no ticket to outlive that.
    await this.checkToken(principal)
    const now = this.now()
    // A ticket opens nothing once its token has expired.
    const expiresAt = Math.min(now + TICKET_TTL_MS, principal.expiresAt ?? Number.POSITIVE_INFINITY)
    const claims: TicketClaims = {
      t: principal.tokenId,
      s: [...principal.scopes],
      l: principal.rateLimit,
      x: principal.expiresAt,
      m: principal.maker,
      e: expiresAt,
    }
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
    const signature = await this.sign(payload)
    return { ticket: `${PREFIX}${payload}_${signature}`, expiresAt: new Date(expiresAt) }
  }

  /**
   * The principal a ticket was issued to, or the 401 AppError that says why not: a forged or altered
   * ticket, an expired one, or one whose token has since been revoked or has expired.
   */
  async verify(ticket: string): Promise<Principal> {
    const match = TICKET_SHAPE.exec(ticket)
    if (!match) throw new AppError(errors.TICKET_INVALID)
    const [, payload, signature] = match as unknown as [string, string, string]
    const expected = Buffer.from(await this.sign(payload))
    const given = Buffer.from(signature)
    if (given.length !== SIGNATURE_LENGTH || !timingSafeEqual(expected, given)) {
      throw new AppError(errors.TICKET_INVALID)
    }
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as TicketClaims
    const now = this.now()
    if (claims.e <= now) throw new AppError(errors.TICKET_EXPIRED)
    const principal: Principal = {
      tokenId: claims.t,
      name: TICKET_NAME,
      scopes: new Set(claims.s),
      rateLimit: claims.l,
      expiresAt: claims.x,
      maker: claims.m,
    }
    await this.checkToken(principal)
    return principal
  }

  /**
   * Throws the 401 AppError of an opaque token that has been revoked, deleted or has expired since
   * the ticket was issued. A JWT cannot be revoked: it ends at its expiry, which the stream keeps.
   */
  async checkToken(principal: Principal): Promise<void> {
    if (!('tokenId' in principal.maker)) {
      if (principal.expiresAt !== null && principal.expiresAt <= this.now()) {
        throw new AppError(errors.TOKEN_EXPIRED)
      }
      return
    }
    const record = await this.tokens.find(principal.tokenId)
    if (!record) throw new AppError(errors.TOKEN_UNKNOWN)
    if (record.revokedAt) throw new AppError(errors.TOKEN_REVOKED)
    if (record.expiresAt && record.expiresAt.getTime() <= this.now()) throw new AppError(errors.TOKEN_EXPIRED)
  }

  private async sign(payload: string): Promise<string> {
    this.key ??= this.store.key(randomBytes(32)).catch((error: unknown) => {
      this.key = undefined
      throw error
    })
    return createHmac('sha256', await this.key)
      .update(payload)
      .digest('base64url')
  }
}
