/**
 * The write lock or a snapshot was not to be had this time: SQLITE_BUSY, and its extended codes, such
 * as SQLITE_BUSY_RECOVERY (another connection is rebuilding the wal-index after a crash, for a few
 * milliseconds) or SQLITE_BUSY_SNAPSHOT (a transaction's snapshot went stale). A new transaction a
 * moment later gets past each.
 */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'))
}

/**
 * Runs `work` (which opens its own transaction) until it gets past a locked database, without
 * blocking the thread: it tries again on the next two turns of the event loop (another connection's
 * transaction is usually over by then), then after 1 ms and every 2 ms, for at most `limitMs`.
 * Meant for connections opened with a busy timeout of 0, where SQLite's own busy handler would
 * otherwise sleep the thread. Waits kept short leave the lock free only briefly after another
 * process's commit or a checkpoint's RESTART, and an attempt costs next to nothing.
 */
export async function retryWhileBusy<T>(work: () => T, limitMs = 5000): Promise<T> {
  // On the monotonic clock: by the wall clock, a step back kept a request retrying for as long as the step.
  const deadline = performance.now() + limitMs
  for (let attempt = 0; ; attempt++) {
    try {
      return work()
    } catch (error) {
      if (!isBusy(error) || performance.now() > deadline) throw error
    }
    await new Promise((resolve) =>
      attempt < 2 ? setImmediate(resolve) : setTimeout(resolve, attempt === 2 ? 1 : 2),
    )
  }
}

/** Never notified: Atomics.wait on it only sleeps the thread for its timeout. */
const PAUSE = new Int32Array(new SharedArrayBuffer(4))

/**
 * Runs `work` until it gets past a locked database, sleeping the thread 2 ms between attempts, for at
 * most `limitMs`. For a statement SQLite may refuse at once with SQLITE_BUSY, without calling its
 * busy handler, and only where the thread has nothing else to do meanwhile (opening a database).
 */
export function retryWhileBusySync<T>(work: () => T, limitMs = 5000): T {
  const deadline = performance.now() + limitMs
  for (;;) {
    try {
      return work()
    } catch (error) {
      if (!isBusy(error) || performance.now() > deadline) throw error
    }
    Atomics.wait(PAUSE, 0, 0, 2)
  }
}
