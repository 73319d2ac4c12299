// Imported into every process the tests start while coverage is measured (NODE_OPTIONS, set by
// child-coverage-env.ts). A process ended by SIGKILL writes no coverage, and a test that is done
// with a server often ends it that way: SIGUSR2 has it write what it has collected so far, then end
// as SIGKILL would (test/helpers/process.ts, `end`). Plain JavaScript: Node loads it before anything
// could compile TypeScript.
import { takeCoverage } from 'node:v8'
import { isMainThread } from 'node:worker_threads'

// Signals reach the main thread only.
if (isMainThread) {
  process.on('SIGUSR2', () => {
    takeCoverage()
    process.kill(process.pid, 'SIGKILL')
  })
}
