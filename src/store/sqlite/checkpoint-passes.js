// What the SQLite checkpoint thread (checkpoint-thread.js) does with one request, apart from the
// thread's messaging so that a test can run it on a connection of its own. Plain JavaScript, as the
// thread is: a worker thread starts from a .js file, also under the test runner.

const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Passes before a RESTART or TRUNCATE, each a PASSIVE checkpoint and an fsync of the database file,
 * neither holding the write lock. A PASSIVE checkpoint that does not reach the end of the log (under
 * a create load none does) leaves the database file unsynced, so the pages of every pass since the
 * last complete checkpoint waited for the RESTART's own fsync, under the write lock: that grew to
 * 30–110 ms in a 20 s create load. After the first pass's fsync has written them back, each further
 * pass has only what was committed during the one before, and the RESTART copies and fsyncs the last
 * few milliseconds' frames (2–8 ms under the write lock, timed in the thread).
 */
export const PASSES_BEFORE_RESTART = 3

/**
 * Runs one checkpoint of `mode` on `db`: PASSIVE copies what it can of the log without the write
 * lock; RESTART also waits for the lock, so that the next commit rewinds the log to its start;
 * TRUNCATE also empties the file.
 * `limitMs` bounds a RESTART's or TRUNCATE's wait for the write lock and the readers;
 * `syncDatabase` fsyncs the database file. Types: checkpoint-passes.d.ts.
 */
export function runCheckpoint(db, mode, { limitMs, syncDatabase }) {
  if (mode === 'PASSIVE') {
    db.pragma('wal_checkpoint(PASSIVE)')
    return
  }
  for (let pass = 0; pass < PASSES_BEFORE_RESTART; pass++) {
    db.pragma('wal_checkpoint(PASSIVE)')
    syncDatabase()
  }
  untilNotBusy(db, mode, limitMs)
}

/**
 * Runs the checkpoint until it gets past the write lock and every reader (it reports busy while one
 * holds an older snapshot or a writer holds the lock), waiting from 50 µs and doubling to 4 ms
 * between tries, for at most `limitMs`. It sleeps the calling thread only. Gives up quietly: the next
 * request tries again.
 */
function untilNotBusy(db, mode, limitMs) {
  const deadline = Date.now() + limitMs
  for (let waitMs = 0.05; ; waitMs = Math.min(waitMs * 2, 4)) {
    try {
      const [result] = db.pragma(`wal_checkpoint(${mode})`)
      if (!result?.busy) return
    } catch (error) {
      // SQLITE_BUSY and its extended codes (busy.ts's isBusy; a thread's plain script cannot import it).
      if (!String(error?.code).startsWith('SQLITE_BUSY')) throw error
    }
    if (Date.now() > deadline) return
    Atomics.wait(pause, 0, 0, waitMs)
  }
}
