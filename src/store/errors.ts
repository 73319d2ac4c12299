/**
 * The database could not be reached, or stopped answering within its timeout. The operation did not
 * complete as far as this process knows (a write may still have committed if the connection broke
 * during COMMIT), and it may succeed when retried later: the HTTP layer answers 503 with Retry-After.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}
