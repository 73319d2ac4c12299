import type { FastifyBaseLogger } from 'fastify'
import type { CatalogEntry } from '../errors.js'
import { logsAt } from '../log.js'
import { errorLogLevel, errorText } from './errors.js'

/**
 * Writes the log line of a request that failed. While the database is unavailable every request
 * fails the same way: the first refusal is a warning, and then at most one more each `windowMs`,
 * saying how many were refused without a line since the last. A line per request would bury the
 * cause under thousands of copies a second and add to the load of a service already in trouble.
 * Every other failure keeps its own line: a 500 is a defect to find, a 4xx a debug detail.
 */
export class FailureLog {
  private lastOutageLine = Number.NEGATIVE_INFINITY
  private unlogged = 0

  constructor(
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** `bindings` (the request id) are added to the line; the child logger is built only for a line. */
  write(
    log: FastifyBaseLogger,
    error: unknown,
    failure: { entry: CatalogEntry; message: string },
    bindings?: Record<string, unknown>,
  ): void {
    const level = errorLogLevel(error, failure.entry)
    if (!logsAt(log, level)) return
    const [fields, message] = errorText(error, failure)
    if (level === 'warn') {
      const now = this.now()
      if (now - this.lastOutageLine < this.windowMs) {
        this.unlogged += 1
        return
      }
      if (this.unlogged > 0) fields.refusedWithoutLine = this.unlogged
      this.lastOutageLine = now
      this.unlogged = 0
    }
    ;(bindings ? log.child(bindings) : log)[level](fields, message)
  }
}
