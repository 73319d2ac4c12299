// The SQLite checkpoint thread: it owns a connection of its own and copies the write-ahead log back
// into the database when asked (checkpoint-passes.js), so that this work (thousands of page writes
// and fsyncs of the database file) never stalls the event loop, which commits the creates.
//
// Under synchronous=NORMAL a checkpoint fsyncs the log before it copies it, and the database once it
// has copied the whole log, so restarting or truncating the log never drops a frame the event loop
// has not fsynced yet.
import { closeSync, fdatasyncSync, openSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { runCheckpoint } from './checkpoint-passes.js'

// Never a new file: SQLite would open an empty database where the one opened was moved away, and
// delete the log beside it, which holds creates already acknowledged.
const db = new Database(workerData.path, { fileMustExist: true })
db.pragma('busy_timeout = 0')
db.pragma('synchronous = NORMAL')
db.pragma(workerData.pageCachePragma)
// For fsyncs of the database file between passes: a descriptor of the file flushes the pages that
// any connection wrote to it.
const dbFile = openSync(workerData.path, 'r')
const options = { limitMs: workerData.busyTimeoutMs, syncDatabase: () => fdatasyncSync(dbFile) }

parentPort.on('message', (message) => {
  if (message === 'close') {
    closeSync(dbFile)
    db.close()
    parentPort.close()
    return
  }
  try {
    runCheckpoint(db, message.mode, options)
    parentPort.postMessage({})
  } catch (error) {
    parentPort.postMessage({ error: String(error?.message ?? error) })
  }
})
