/**
 * Runs `work` (which opens its own transaction) until it gets past a locked database, retrying after
 * 1, 2, 4, then every 8 ms without blocking the thread, for at most `limitMs`. Meant for connections
 * opened with a busy timeout of 0, where SQLite's own busy handler would otherwise sleep the thread.
 */
export async function retryWhileBusy<T>(work: () => T, limitMs = 5000): Promise<T> {
  const deadline = Date.now() + limitMs
  for (let wait = 1; ; wait = Math.min(wait * 2, 8)) {
    try {
      return work()
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}
