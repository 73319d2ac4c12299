/** A key's count as @fastify/rate-limit reads it: above the limit means refused. */
export interface Count {
  current: number
  /** Milliseconds until a retry may be admitted: the window's end, or sooner. */
  ttl: number
}

/** How a process counts requests against its rate limits. */
export interface Counting {
  /**
   * Counts a request against `key`, limited to `max` per `windowMs`; a promise when the response waits
   * for allowance to be reserved.
   */
  count(key: string, windowMs: number, max: number): Count | Promise<Count>
  /** Gives back a request counted against `key`, if its window is still the current one. */
  giveBack(key: string): void
  /** Stops counting; resolves once what the process held is given back to the others, if anything. */
  close(): Promise<void>
}

/** Tokens and addresses counted at once; past this the one counted longest ago is forgotten. */
export const MAX_COUNTED_KEYS = 20_000
