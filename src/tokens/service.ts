import { setNewest } from '../bounded-map.js'
import type { RateLimit } from '../config.js'
import { AppError, type CatalogEntry, errors } from '../errors.js'
import { pageOf } from '../page.js'
import type { Revocation, TokenMaker, TokenRecord, TokenStore } from '../store/types.js'
import { generateToken, newSecretFor, parseToken, secretMatches } from './format.js'
import type { Scope } from './scopes.js'
import { type TokensQuery, tokenCursor } from './validate.js'

export interface Principal {
  tokenId: string
  name: string
  scopes: ReadonlySet<string>
  /** The token's own rate limit, which overrides the service-wide one; null: it has none. */
  rateLimit: RateLimit | null
  /** When the token expires (ms since the epoch); null: never. A token it makes expires no later. */
  expiresAt: number | null
  /** What a token it makes records as its maker. */
  maker: TokenMaker
}

/** Who makes a token over HTTP, and the latest expiry the token may have (null: none). */
export interface MadeBy {
  by: TokenMaker
  notAfter: number | null
}

interface CachedToken {
  principal: Principal
  /** When this secret stops being accepted: the token's expiry, or a rolled-over secret's end. */
  expiresAt: number
  /** What a request with this secret is refused with from then on. */
  expiredError: CatalogEntry
  lastTouched: number
}

/** The scopes of `wanted` that `held` lacks. */
export function missingScopes(held: ReadonlySet<string>, wanted: readonly string[]): string[] {
  return wanted.filter((scope) => !held.has(scope))
}

export interface TokenServiceOptions {
  now?: () => number
  /** "Last used" is written at most this often per token. */
  lastUsedIntervalMs?: number
  /** Verified tokens kept in memory; the oldest is dropped past this. */
  cacheSize?: number
  onBackgroundError?: (error: unknown) => void
  /** Told whether each verification was answered from memory ('hit') or had to read the store. */
  onVerify?: (cache: 'hit' | 'miss') => void
}

export interface CreatedToken {
  token: string
  record: TokenRecord
}

/**
 * Issues and verifies bearer tokens. Verification is on every request's path, so a token that was
 * verified once is remembered (keyed by the whole token string, so a hit proves the secret too) until
 * its expiry (a rolled-over secret: until its overlap ends), or until any process revokes or rolls
 * any token: the store's revocation epoch is checked on every
 * call and a move empties the cache, so a revocation is seen by the next request.
 */
export class TokenService {
  private readonly cache = new Map<string, CachedToken>()
  private epoch: number
  private epochFresh = false
  /** The clock tokens are issued, expired and shown by (tests move it). */
  readonly now: () => number
  private readonly lastUsedIntervalMs: number
  private readonly cacheSize: number
  private readonly onBackgroundError: (error: unknown) => void
  private readonly onVerify: (cache: 'hit' | 'miss') => void

  constructor(
    private readonly store: TokenStore,
    options: TokenServiceOptions = {},
  ) {
    this.now = options.now ?? Date.now
    this.lastUsedIntervalMs = options.lastUsedIntervalMs ?? 60_000
    this.cacheSize = options.cacheSize ?? 10_000
    this.onBackgroundError = options.onBackgroundError ?? (() => {})
    this.onVerify = options.onVerify ?? (() => {})
    this.epoch = store.revocationEpoch()
  }

  async create(
    name: string,
    scopes: readonly Scope[],
    expiresInMs?: number,
    rateLimit: RateLimit | null = null,
    madeBy?: MadeBy,
  ): Promise<CreatedToken> {
    const created = this.issue(name, scopes, expiresInMs, rateLimit, madeBy)
    await this.store.insert(created.record)
    return created
  }

  /** The token with this id, revoked and expired ones too; a 404 AppError when there is none. */
  async get(publicId: string): Promise<TokenRecord> {
    const record = await this.store.find(publicId)
    if (!record) throw new AppError(errors.TOKEN_NOT_FOUND)
    return record
  }

  /** A page of tokens, oldest first, and the cursor of the next page when one may follow. */
  async list(query: TokensQuery): Promise<{ tokens: TokenRecord[]; next: string | undefined }> {
    const rows = await this.store.list({ ...query, limit: query.limit + 1 })
    const page = pageOf(rows, query.limit, tokenCursor)
    return { tokens: page.rows, next: page.next }
  }

  /**
   * Gives the token a new secret. The replaced one is accepted for `overlapMs` more (0: not at all),
   * and a secret replaced by an earlier roll stops at once: a token has two secrets at most. Every
   * instance drops what it cached of the token, as after a revocation. A 404 AppError when no token
   * has this id, or when it is revoked or expired.
   */
  async roll(publicId: string, overlapMs: number): Promise<CreatedToken> {
    const { token, secretHash } = newSecretFor(publicId)
    const now = this.now()
    const previousSecretExpiresAt = overlapMs > 0 ? new Date(now + overlapMs) : null
    const record = await this.store.roll(publicId, { secretHash, previousSecretExpiresAt }, new Date(now))
    // As after a revocation: this process sees its own roll from the next request on.
    this.epochFresh = false
    if (record) return { token, record }
    throw new AppError((await this.store.find(publicId)) ? errors.TOKEN_NOT_ACTIVE : errors.TOKEN_NOT_FOUND)
  }

  /**
   * Issues the store's first token, or nothing (undefined) when it already holds one. `deliver` is
   * handed the secret before the token is stored: when it throws, nothing is stored, so no token
   * exists whose secret nobody was given.
   */
  async createFirst(
    name: string,
    scopes: readonly Scope[],
    deliver: (token: string) => void,
  ): Promise<CreatedToken | undefined> {
    const created = this.issue(name, scopes, undefined, null)
    const stored = await this.store.insertFirst(created.record, () => deliver(created.token))
    return stored ? created : undefined
  }

  private issue(
    name: string,
    scopes: readonly Scope[],
    expiresInMs: number | undefined,
    rateLimit: RateLimit | null,
    madeBy?: MadeBy,
  ): CreatedToken {
    const { token, publicId, secretHash } = generateToken()
    const createdAt = new Date(this.now())
    // A token made by another ends no later than its maker, whatever lifetime was asked for.
    const asked = expiresInMs === undefined ? Number.POSITIVE_INFINITY : createdAt.getTime() + expiresInMs
    const expiresAt = Math.min(asked, madeBy?.notAfter ?? Number.POSITIVE_INFINITY)
    const record: TokenRecord = {
      id: publicId,
      name,
      secretHash,
      scopes: [...scopes],
      createdAt,
      expiresAt: expiresAt === Number.POSITIVE_INFINITY ? null : new Date(expiresAt),
      lastUsedAt: null,
      revokedAt: null,
      previousSecretHash: null,
      previousSecretExpiresAt: null,
      rateLimit,
      createdBy: madeBy?.by ?? null,
    }
    return { token, record }
  }

  async revoke(publicId: string): Promise<Revocation> {
    const revoked = await this.store.revoke(publicId, new Date(this.now()))
    // This process sees its own revocation at once, even within the turn that made it.
    this.epochFresh = false
    return revoked
  }

  /** Resolves to the token's principal, or throws the 401 AppError that says why not. */
  async verify(token: string): Promise<Principal> {
    return this.verifyCached(token) ?? this.load(token)
  }

  /**
   * The principal of a token verified before, without a promise (the common case on the request
   * path); undefined when it has to be read from the store with `verify`. Throws the 401 AppError
   * of a remembered token that has since expired, or of a rolled-over secret whose overlap has ended.
   */
  verifyCached(token: string): Principal | undefined {
    this.checkRevocations()
    const cached = this.cache.get(token)
    // A miss is counted by load, which the caller goes on to: once per request, not per look.
    if (!cached) return undefined
    this.onVerify('hit')
    const now = this.now()
    if (cached.expiresAt <= now) {
      this.cache.delete(token)
      throw new AppError(cached.expiredError)
    }
    this.touch(cached, now)
    return cached.principal
  }

  /**
   * Empties the cache when any process has revoked a token since the last look. Looked at once per
   * turn of the event loop, not per request: every request handled in a turn was read after that
   * turn's poll returned, so after any revocation that finished before it arrived.
   *
   * That holds because every caller looks from the request event itself, which Node's HTTP parser
   * emits from the poll phase's socket read (it reads the socket natively, so a pipelined request
   * held back while the connection drains is read in a later poll too): the look's trust ends in the
   * same turn's check phase, before the next poll. A look made from a setImmediate callback would
   * keep its trust through the next turn's poll, as an immediate queued there runs only after it;
   * Node offers nothing that runs before the next poll without a DB read per request, so none is.
   */
  private checkRevocations(): void {
    if (this.epochFresh) return
    // Read first: a read that fails leaves nothing trusted, and the next look reads again.
    const epoch = this.store.revocationEpoch()
    this.epochFresh = true
    setImmediate(this.expireEpoch)
    if (epoch !== this.epoch) {
      this.epoch = epoch
      this.cache.clear()
    }
  }

  private readonly expireEpoch = () => {
    this.epochFresh = false
  }

  private async load(token: string): Promise<Principal> {
    this.onVerify('miss')
    const parsed = parseToken(token)
    if (!parsed) throw new AppError(errors.TOKEN_MALFORMED)
    // A revocation seen while the row was being read may have been committed after the read: the
    // request that saw it has already emptied the cache, so caching this row now would keep the
    // revoked token accepted until the next revocation. Read again until no revocation came between.
    let epoch: number
    let record: TokenRecord | undefined
    do {
      epoch = this.store.revocationEpoch()
      record = await this.store.find(parsed.publicId)
    } while (epoch !== this.store.revocationEpoch())
    if (!record) throw new AppError(errors.TOKEN_UNKNOWN)
    // The current secret, or the one the last roll replaced while its overlap runs. A cached entry of
    // the replaced one ends with the overlap, so no instance accepts it past that.
    let secretEndsAt = Number.POSITIVE_INFINITY
    if (!secretMatches(parsed.secret, record.secretHash)) {
      const previous = record.previousSecretHash
      if (previous === null || !secretMatches(parsed.secret, previous))
        throw new AppError(errors.TOKEN_UNKNOWN)
      secretEndsAt = record.previousSecretExpiresAt?.getTime() ?? Number.NEGATIVE_INFINITY
    }
    if (record.revokedAt) throw new AppError(errors.TOKEN_REVOKED)
    // Taken after the read: a token that expired while the read waited for a connection is expired.
    const now = this.now()
    const tokenEndsAt = record.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY
    if (tokenEndsAt <= now) throw new AppError(errors.TOKEN_EXPIRED)
    // A replaced secret past its overlap is no longer one of this token's.
    if (secretEndsAt <= now) throw new AppError(errors.TOKEN_UNKNOWN)
    const entry: CachedToken = {
      principal: {
        tokenId: record.id,
        name: record.name,
        scopes: new Set(record.scopes),
        rateLimit: record.rateLimit,
        expiresAt: record.expiresAt?.getTime() ?? null,
        maker: { tokenId: record.id },
      },
      expiresAt: Math.min(tokenEndsAt, secretEndsAt),
      expiredError: tokenEndsAt <= secretEndsAt ? errors.TOKEN_EXPIRED : errors.TOKEN_UNKNOWN,
      lastTouched: record.lastUsedAt?.getTime() ?? Number.NEGATIVE_INFINITY,
    }
    setNewest(this.cache, token, entry, this.cacheSize)
    this.touch(entry, now)
    return entry.principal
  }

  /** Records "last used" at most once per interval, after the response path has moved on. */
  private touch(entry: CachedToken, now: number): void {
    if (now - entry.lastTouched < this.lastUsedIntervalMs) return
    entry.lastTouched = now
    setImmediate(() => {
      this.store.touchLastUsed(entry.principal.tokenId, new Date(now)).catch(this.onBackgroundError)
    })
  }
}
