import type { RateLimit } from '../config.js'
import { AppError, errors } from '../errors.js'
import { formatRateLimit } from '../rate-limit-text.js'
import type { Principal } from './service.js'

// A token made over HTTP never outlives nor outranks its maker: otherwise a short-lived or limited
// caller (a JWT that expires in minutes) could mint a token without either, and keep access past it.

/** What a maker's token gets: the expiry and limit asked for, or the maker's where none was asked. */
export interface MadeBounds {
  /** The lifetime asked for; undefined: the token ends with its maker (never, if the maker does not). */
  expiresInMs: number | undefined
  /** The latest expiry the token may have (ms since the epoch); null: none. */
  notAfter: number | null
  rateLimit: RateLimit | null
}

/**
 * Whether `limit` allows no more than `bound`, over any span of time: no larger burst (count) and no
 * faster sustained rate (count per window). `10/1s` is within `600/1m`, and `600/1m` is not within
 * `10/1s` (a burst of 600).
 */
export function withinLimit(limit: RateLimit, bound: RateLimit): boolean {
  return limit.max <= bound.max && limit.max * bound.windowMs <= bound.max * limit.windowMs
}

/**
 * The bounds of a token `maker` makes, asking for `expiresInMs` and `rateLimit` (undefined, null:
 * not asked, so the maker's). `serviceLimit` is --rate-limit, which applies to a maker of no limit
 * of its own. A 403 when the token would expire after its maker or be allowed more than it.
 */
export function boundsOfMade(
  maker: Principal,
  asked: { expiresInMs?: number; rateLimit: RateLimit | null },
  serviceLimit: RateLimit | null,
  now: number,
): MadeBounds {
  if (
    asked.expiresInMs !== undefined &&
    maker.expiresAt !== null &&
    now + asked.expiresInMs > maker.expiresAt
  ) {
    throw new AppError(
      errors.TOKEN_OUTLIVES_MAKER,
      `A token cannot expire after the token that makes it; this one expires at ${new Date(maker.expiresAt).toISOString()}: ask for a shorter expiresIn, or leave it out to expire with it.`,
    )
  }
  const makerLimit = maker.rateLimit ?? serviceLimit
  if (asked.rateLimit !== null && makerLimit !== null && !withinLimit(asked.rateLimit, makerLimit)) {
    throw new AppError(
      errors.TOKEN_OUTLIVES_MAKER,
      `A token cannot be allowed more requests than the token that makes it; this one is limited to ${formatRateLimit(makerLimit)}: ask for no more, or leave rateLimit out to share its limit.`,
    )
  }
  return {
    expiresInMs: asked.expiresInMs,
    notAfter: maker.expiresAt,
    rateLimit: asked.rateLimit ?? maker.rateLimit,
  }
}

/**
 * Rolling hands the caller the token's secret: a 403, as for creating it, when the rolled token
 * would outlive or outrank the caller.
 */
export function checkRollBounds(
  roller: Principal,
  rolled: { expiresAt: Date | null; rateLimit: RateLimit | null },
  serviceLimit: RateLimit | null,
): void {
  const expiresAt = rolled.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY
  if (roller.expiresAt !== null && expiresAt > roller.expiresAt) {
    throw new AppError(
      errors.TOKEN_OUTLIVES_MAKER,
      `A token cannot roll a token that expires after it does (${new Date(roller.expiresAt).toISOString()}): rolling hands out its secret.`,
    )
  }
  const rollerLimit = roller.rateLimit ?? serviceLimit
  const rolledLimit = rolled.rateLimit ?? serviceLimit
  if (rollerLimit !== null && (rolledLimit === null || !withinLimit(rolledLimit, rollerLimit))) {
    throw new AppError(
      errors.TOKEN_OUTLIVES_MAKER,
      `A token cannot roll a token allowed more requests than it is (${formatRateLimit(rollerLimit)}): rolling hands out its secret.`,
    )
  }
}
