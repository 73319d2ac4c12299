// The ceiling the benchmark compares the service with: bare node:http in one process, doing the
// least any correct server must (bearer comparison, native JSON.parse, the same type and length
// checks) and storing nothing. No framework, no database, no logging.
//
//   node bench/ceiling.mjs --port 0 --token pst_…
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { isText, readObject, readPlant, respond } from './bare-create.mjs'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
  },
})
if (!values.token) {
  process.stderr.write('ceiling: --token is required\n')
  process.exit(2)
}
const expected = `Bearer ${values.token}`

// What GET /plants?limit=100 responds with: the same amount of JSON the service sends for a full page of the
// plants the benchmark stores (setup.ts, storedIdStride), here the middle of a million: ids of 19
// digits, every other plant tagged.
const STRIDE = Number((2n ** 63n - 1n) / 1_000_000n)
const page = Array.from({ length: 100 }, (_, i) => {
  const x = 500_001 + i
  return x % 2 === 0
    ? { id: x * STRIDE, name: `plant ${x}`, tag: 'bench' }
    : { id: x * STRIDE, name: `plant ${x}` }
})

function create(req, res) {
  readPlant(req, res, (plant) => respond(res, 200, plant))
}

/** PATCH /plants/{id}: a merge patch of name and tag, checked as the service checks it, applied to nothing. */
function update(req, res, id) {
  readObject(req, res, (patch) => {
    if (patch.name !== undefined && !isText(patch.name, 200)) {
      return respond(res, 400, { error: 40006, message: 'bad name' })
    }
    if (patch.tag !== undefined && patch.tag !== null && !isText(patch.tag, 100)) {
      return respond(res, 400, { error: 40008, message: 'bad tag' })
    }
    respond(res, 200, { id: Number(id), name: patch.name ?? `plant ${id}`, tag: patch.tag ?? 'bench' })
  })
}

const server = createServer((req, res) => {
  if (req.headers.authorization !== expected) {
    return respond(res, 401, { error: 40103, message: 'The bearer token is not valid.' })
  }
  const url = req.url ?? '/'
  if (req.method === 'POST' && url === '/plants') return create(req, res)
  if (req.method === 'GET' && url.startsWith('/plants?')) {
    const limit = Number(new URLSearchParams(url.slice(8)).get('limit') ?? 100)
    return respond(res, 200, { items: page.slice(0, limit), next: null })
  }
  if ((req.method === 'GET' || req.method === 'PATCH') && url.startsWith('/plants/')) {
    const id = url.slice(8)
    if (!/^-?[0-9]{1,19}$/.test(id)) return respond(res, 400, { error: 40011, message: 'bad id' })
    if (req.method === 'PATCH') return update(req, res, id)
    return respond(res, 200, { id: Number(id), name: `plant ${id}`, tag: 'bench' })
  }
  respond(res, 404, { error: 40401, message: 'No such route.' })
})
server.keepAliveTimeout = 5000

server.listen(Number(values.port), values.host, () => {
  const { address, port } = server.address()
  process.stdout.write(`listening on http://${address}:${port}\n`)
})
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close(() => process.exit(0)))
