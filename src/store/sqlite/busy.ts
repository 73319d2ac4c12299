/**
 * Runs `work` (which opens its own transaction) until it gets past a locked database, without
 * blocking the thread: it tries again on the next two turns of the event loop (another connection's
 * transaction is usually over by then), then after 1, 2, 4 and every 8 ms, for at most `limitMs`.
 * Meant for connections opened with a busy timeout of 0, where SQLite's own busy handler would
 * otherwise sleep the thread.
 */
export async function retryWhileBusy<T>(work: () => T, limitMs = 5000): Promise<T> {
  const deadline = Date.now() + limitMs
  for (let attempt = 0; ; attempt++) {
    try {
      return work()
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
    }
    await new Promise((resolve) =>
      attempt < 2 ? setImmediate(resolve) : setTimeout(resolve, Math.min(2 ** (attempt - 2), 8)),
    )
  }
}
