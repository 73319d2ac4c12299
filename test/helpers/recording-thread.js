// Stands in for the SQLite checkpoint thread: it checkpoints nothing, and appends each requested mode
// to `<database>.modes` when it starts one, answering 50 ms later as a real checkpoint would take a
// while, so a test can read the sequence the sink asked for and ask for more meanwhile.
import { appendFileSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'

parentPort.on('message', (message) => {
  if (message === 'close') {
    parentPort.close()
    return
  }
  appendFileSync(`${workerData.path}.modes`, `${message.mode}\n`)
  setTimeout(() => parentPort.postMessage({}), 50)
})
