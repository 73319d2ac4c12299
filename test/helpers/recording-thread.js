// Stands in for the SQLite checkpoint thread: it checkpoints nothing, and appends each requested mode
// to `<database>.modes` before answering, so a test can read the sequence the sink asked for.
import { appendFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'

parentPort.on('message', (message) => {
  if (message === 'close') {
    parentPort.close()
    return
  }
  appendFileSync(`${workerData.path}.modes`, `${message.mode}\n`)
  parentPort.postMessage({})
})
