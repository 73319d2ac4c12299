/**
 * A failed call. When the service responded, `status` is its HTTP status, `code` the catalog's
 * stable number from its Error shape, and `headers` the response's: the Retry-After of a 429 or 503
 * that outlasted the retries, the WWW-Authenticate of a 401. When no response came (refused, reset, a
 * name that does not resolve), `status` is 0, `code` undefined, `headers` empty, and `cause` is
 * what fetch threw.
 */
export class PlantStoreError extends Error {
  override name = 'PlantStoreError'
  readonly headers: Headers
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
    options?: { cause?: unknown; headers?: Headers },
  ) {
    super(message, options)
    this.headers = options?.headers ?? new Headers()
  }
}
