/** Rows per delete transaction: small enough that a concurrent create never waits noticeably. */
export const CHUNK = 1000

/**
 * Runs `deleteChunk` (a DELETE of at most CHUNK rows, in its own transaction) until a chunk comes
 * back short, letting requests run between chunks; returns how many rows went. Once `signal` is
 * aborted it deletes no further chunk.
 */
export async function deleteInChunks(
  deleteChunk: () => number | Promise<number>,
  signal?: AbortSignal,
): Promise<number> {
  let total = 0
  for (;;) {
    signal?.throwIfAborted()
    const started = performance.now()
    const deleted = await deleteChunk()
    total += deleted
    if (deleted < CHUNK) return total
    // SQLite deletes synchronously: a whole day of rows deleted at once would hold the event loop,
    // and every request, for seconds. Resting as long as the chunk took leaves requests at least half
    // of the time: chunk after chunk with only a turn between them halved the creates a second for
    // the seconds a large sweep lasted. The database's own work is spread out alike on PostgreSQL.
    const took = performance.now() - started
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, took)))
  }
}
