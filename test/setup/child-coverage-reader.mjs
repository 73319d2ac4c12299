// A worker thread of the coverage provider (coverage-provider.ts): reads some of the spawned
// processes' V8 coverage files, keeps the scripts of the build, and merges them into one count per
// file. Plain JavaScript, so that Node runs it as it is. The files are large (every module a process
// loaded) and parsing them is most of the work, which the workers share.
import { readFile } from 'node:fs/promises'
import { parentPort, workerData } from 'node:worker_threads'
import { mergeProcessCovs } from '@bcoe/v8-coverage'

const { files, build } = workerData
let merged = { result: [] }
let unreadable = 0
for (const file of files) {
  let raw
  try {
    raw = JSON.parse(await readFile(file, 'utf8'))
  } catch {
    // A process killed while it wrote its coverage leaves the file cut short.
    unreadable++
    continue
  }
  const result = raw.result.filter(
    (script) => script.url.startsWith(`${build}/`) && script.url.endsWith('.js'),
  )
  if (result.length > 0) merged = mergeProcessCovs([merged, { result }])
}
parentPort.postMessage({ scripts: merged.result, unreadable })
