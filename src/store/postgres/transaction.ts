import type { Pool, PoolClient } from 'pg'
import { guarded, isConnectionError } from './errors.js'

/**
 * Runs `work` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws. A connection that failed is discarded rather than returned to the pool, since its state
 * (a half-read reply, a timed-out query still running) is unknown.
 */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return guarded(async () => {
    const client = await pool.connect()
    let failure: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await work(client)
      await client.query('COMMIT')
      return result
    } catch (error) {
      failure = error as Error
      // A connection that broke or stopped answering is discarded, which ends its transaction on the
      // server: a ROLLBACK sent on it would only wait out the query timeout a second time.
      if (!isConnectionError(error)) await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release(failure)
    }
  })
}
