import { setTimeout as sleep } from 'node:timers/promises'
import type { Pool, PoolClient } from 'pg'
import { guarded, isConnectionError } from './errors.js'

/**
 * deadlock_detected and serialization_failure: PostgreSQL rolled the whole transaction back, and the
 * same work may well succeed a moment later, once the transaction it crossed has ended.
 */
const RETRYABLE_SQLSTATES = new Set(['40P01', '40001'])
const ATTEMPTS = 3

/**
 * Runs `work` in a transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when it
 * throws. A connection that failed is discarded rather than returned to the pool, since its state
 * (a half-read reply, a timed-out query still running) is unknown. A transaction PostgreSQL aborted
 * as deadlocked (two instances taking the same rows in different orders, which the stores avoid
 * where they can) runs again, up to three times in all, so `work` must do nothing but its queries.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(pool, work)
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (attempt >= ATTEMPTS || typeof code !== 'string' || !RETRYABLE_SQLSTATES.has(code)) throw error
      // A short random pause, so that the two transactions that crossed do not cross again.
      await sleep(Math.random() * 20 * attempt)
    }
  }
}

function once<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
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
      // A connection that broke or stopped responding is discarded, which ends its transaction on the
      // server: a ROLLBACK sent on it would only wait out the query timeout a second time.
      if (!isConnectionError(error)) await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release(failure)
    }
  })
}
