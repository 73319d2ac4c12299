// Prints where a --cpu-prof profile spent its time: the functions with the most self time, and the
// share of each source (our code, Fastify, lossless-json, the SQLite driver, Node itself). Each
// thread writes its own profile (the service's main thread, its checkpoint and dispatcher threads).
//
//   node bench/profile-top.mjs bench/results/profiles/CPU.….cpuprofile [count]
import { readFileSync } from 'node:fs'

process.stdout.on('error', () => process.exit(0)) // `| head` closing the pipe is fine
const [file, countArg] = process.argv.slice(2)
if (!file) {
  process.stderr.write('usage: node bench/profile-top.mjs FILE.cpuprofile [count]\n')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(file, 'utf8'))
const count = Number(countArg ?? 25)

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfUs = new Map()
const deltas = profile.timeDeltas
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]
  selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i] ?? 0))
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

function where(url) {
  if (!url) return 'native'
  const modules = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)
  if (modules) return modules[1]
  if (url.startsWith('node:')) return 'node'
  const own = url.match(/\/(dist|src)\/(.*)$/)
  return own ? own[2] : url
}

const functions = new Map()
const sources = new Map()
for (const [id, us] of selfUs) {
  const { callFrame } = byId.get(id)
  const source = where(callFrame.url)
  const key = `${callFrame.functionName || '(anonymous)'}  ${source}:${callFrame.lineNumber + 1}`
  functions.set(key, (functions.get(key) ?? 0) + us)
  sources.set(source, (sources.get(source) ?? 0) + us)
}

const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%`
const idle = [...functions].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, us]) => a + us, 0)
process.stdout.write(
  `total ${(total / 1e6).toFixed(1)} s sampled, idle ${pct(idle)}\n\ntop functions by self time\n`,
)
for (const [key, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, count)) {
  process.stdout.write(`${pct(us)}  ${key}\n`)
}
process.stdout.write('\nby source\n')
for (const [key, us] of [...sources].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
  process.stdout.write(`${pct(us)}  ${key}\n`)
}
