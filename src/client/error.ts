/**
 * A failed call. When the service answered, `status` is its HTTP status and `code` the catalog's
 * stable number from its Error shape. When no answer came (refused, reset, a name that does not
 * resolve), `status` is 0, `code` undefined, and `cause` is what fetch threw.
 */
export class PlantStoreError extends Error {
  override name = 'PlantStoreError'
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
    options?: { cause: unknown },
  ) {
    super(message, options)
  }
}
