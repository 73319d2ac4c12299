// The SQLite writer thread: it owns a second connection and commits create batches, so the fsync of
// synchronous=FULL blocks this thread instead of the event loop that serves requests. While one batch
// commits here, the next one gathers in the main thread.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { prepareBatchWriter } from './batch.js'

const db = new Database(workerData.path)
db.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')
db.pragma('foreign_keys = ON')
const writeBatch = prepareBatchWriter(db)

parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    parentPort.postMessage({ outcomes: writeBatch(message.batch, message.now) })
  } catch (error) {
    parentPort.postMessage({ error: { message: String(error?.message ?? error), code: error?.code } })
  }
})
