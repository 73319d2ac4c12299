// The SQLite checkpoint thread: it owns a connection of its own and copies the write-ahead log back
// into the database when asked, so that this work (thousands of page writes and an fsync of the
// database file) never stalls the event loop, which commits the creates.
//
// Under synchronous=NORMAL a checkpoint fsyncs the log before it copies it and the database after,
// so restarting or truncating the log never drops a frame the event loop has not fsynced yet.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

const db = new Database(workerData.path)
db.pragma('busy_timeout = 0')
db.pragma('synchronous = NORMAL')
db.pragma(workerData.pageCachePragma)
const pause = new Int32Array(new SharedArrayBuffer(4))

/**
 * Runs the checkpoint until it gets past the write lock and every reader (it reports busy while one
 * holds an older snapshot or a writer holds the lock), waiting from 50 µs and doubling to 4 ms
 * between tries, for at most `limitMs`. It sleeps this thread only. Gives up quietly: the next
 * request tries again.
 */
function checkpoint(mode, limitMs) {
  const deadline = Date.now() + limitMs
  for (let waitMs = 0.05; ; waitMs = Math.min(waitMs * 2, 4)) {
    try {
      const [result] = db.pragma(`wal_checkpoint(${mode})`)
      if (!result?.busy) return
    } catch (error) {
      if (error?.code !== 'SQLITE_BUSY') throw error
    }
    if (Date.now() > deadline) return
    Atomics.wait(pause, 0, 0, waitMs)
  }
}

parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    // PASSIVE first copies the bulk of the log while writers go on committing; a RESTART or
    // TRUNCATE that follows then holds the write lock only for the frames committed meanwhile.
    db.pragma('wal_checkpoint(PASSIVE)')
    if (message.mode !== 'PASSIVE') checkpoint(message.mode, workerData.busyTimeoutMs)
    parentPort.postMessage({})
  } catch (error) {
    parentPort.postMessage({ error: String(error?.message ?? error) })
  }
})
