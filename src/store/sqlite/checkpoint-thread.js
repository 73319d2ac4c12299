// The SQLite checkpoint thread: on a connection of its own, it copies the write-ahead log back into
// the database every interval, so that this work (page copies and an fsync of the database file)
// never stalls the event loop, which commits the writes. Without a busy handler a RESTART never waits:
// when it gets the write lock it copies the whole log and the next commit rewinds the log to its
// start; when it does not, it copies what it can, as a PASSIVE checkpoint does.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

// Never a new file: SQLite would open an empty database where the one opened was moved away.
const db = new Database(workerData.path, { fileMustExist: true })
db.pragma('busy_timeout = 0')
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(RESTART)')
  } catch {
    // Another process's checkpoint, or a lock: the next interval tries again.
  }
}, workerData.intervalMs)
parentPort?.once('message', () => {
  clearInterval(timer)
  db.close()
  parentPort?.close()
})
