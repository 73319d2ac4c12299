// Loaded with `node --import`: appends the URL of every module the process loads, one a line, to the
// file RECORD_LOADS names. The ES modules are seen as they resolve (the hook runs on the loader's
// thread), the CommonJS ones in require's cache as the process exits: a package one of them requires
// is seen too.
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { pathToFileURL } from 'node:url'

const file = process.env.RECORD_LOADS
if (!file) throw new Error('record-loads.mjs needs RECORD_LOADS, the file to append the loads to')

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs'
let file
export function initialize(data) {
  file = data.file
}
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  appendFileSync(file, resolved.url + '\\n')
  return resolved
}`)}`,
  { data: { file } },
)

const { cache } = createRequire(import.meta.url)
process.on('exit', () => {
  const loaded = Object.keys(cache).map((path) => pathToFileURL(path).href)
  appendFileSync(file, loaded.map((url) => `${url}\n`).join(''))
})
