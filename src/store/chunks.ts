/** Rows per transaction of a bulk change: small enough that a concurrent create never waits noticeably. */
export const CHUNK = 1000

/**
 * Runs `chunk` (a change of at most CHUNK rows, in its own transaction: a retention delete, a replay's
 * inserts) until one comes back short, letting requests run between chunks; returns how many rows
 * changed. Once `signal` is aborted it runs no further chunk.
 */
export async function inChunks(chunk: () => number | Promise<number>, signal?: AbortSignal): Promise<number> {
  let total = 0
  for (;;) {
    signal?.throwIfAborted()
    const started = performance.now()
    const changed = await chunk()
    total += changed
    if (changed < CHUNK) return total
    // SQLite writes synchronously, so one large delete would hold the event loop, and every request.
    // Resting as long as the chunk took leaves requests at least half the time (on PostgreSQL, half
    // the database's time).
    const took = performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, took)))
  }
}
