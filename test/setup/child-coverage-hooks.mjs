// Imported into every process the tests start while coverage is measured (NODE_OPTIONS, set by
// child-coverage-env.ts), for the two ways such a process would otherwise lose the coverage it
// writes as it exits. Plain JavaScript: Node loads it before anything could compile TypeScript.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { takeCoverage } from 'node:v8'
import { isMainThread } from 'node:worker_threads'

/** Whether this process may write files of a limited size only (`ulimit -f`). */
function fileSizeLimited() {
  try {
    return !/^Max file size\s+unlimited/m.test(readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    return false
  }
}

// Signals reach the main thread only, and the process's own coverage is written by it.
if (isMainThread) {
  // A process ended by SIGKILL writes no coverage, and a test that is done with a server often ends
  // it that way: SIGUSR2 has it write what it has collected so far, then end as SIGKILL would
  // (test/helpers/process.ts, `endAtOnce`).
  process.on('SIGUSR2', () => {
    takeCoverage()
    process.kill(process.pid, 'SIGKILL')
  })
  // Tests stand a file-size limit in for a full disk (test/helpers/process.ts, runCliWithFileLimit);
  // the coverage file, megabytes for the service, would be cut at it. The limit is a soft one, which
  // a process may raise back to its hard limit: done as the process exits, after its own last write
  // and before Node writes the coverage.
  process.on('exit', () => {
    if (fileSizeLimited())
      spawnSync('prlimit', [`--pid=${process.pid}`, '--fsize=unlimited:'], { stdio: 'ignore' })
  })
}
