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
    // SQLite writes synchronously: a whole day of rows deleted at once would hold the event loop,
    // and every request, for seconds. Resting as long as the chunk took leaves requests at least half
    // of the time: chunk after chunk with only a turn between them halved the creates a second for
    // the seconds a large sweep lasted. The database's own work is spread out alike on PostgreSQL.
    const took = performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, took)))
  }
}
