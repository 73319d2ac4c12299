// The durable reference the benchmark also measures for POST /plants: the ceiling's create
// (bench/ceiling.mjs: bearer comparison, native JSON.parse, the same type checks) plus the storage
// design the project aims at, with nothing else: one SQLite table in WAL mode with
// synchronous=FULL, every create of one event-loop turn in one transaction, each answered after its
// commit (and so its fsync). No events, no indexes besides the id, no framework, no logging. It
// shows what durable group commit alone costs on this machine, against the same ceiling.
//
// With `--schema service` it writes what the service writes for a create instead, on a database the
// service's own `plantstore migrate` made: the plant row with its times (so also its tag index) and
// its outbox event (the webhook envelope, under a time-ordered message id, with the events table's
// indexes). It leaves out the service's one fan-out statement per transaction, which with no webhook
// subscription reads one empty page. The two side by side show what the tables and indexes a create
// must write cost the same storage design.
//
//   node bench/reference.mjs --port 0 --token pst_… --database /tmp/…/reference.db [--schema service]
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { answer, readPlant } from './bare-create.mjs'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
    database: { type: 'string' },
    schema: { type: 'string', default: 'bare' },
  },
})
if (!values.token || !values.database || !['bare', 'service'].includes(values.schema)) {
  process.stderr.write('reference: --token and --database are required; --schema is bare or service\n')
  process.exit(2)
}
const expected = `Bearer ${values.token}`

const db = new Database(values.database)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')

// Each schema's writer: a function that writes one create's rows, and throws a constraint error for
// an id that exists (the batch answers that create 409 and goes on).
function bareWriter() {
  db.exec('CREATE TABLE IF NOT EXISTS plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT')
  const plant = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)')
  return (id, body) => plant.run(id, body.name, body.tag ?? null)
}

function serviceWriter() {
  const plant = db.prepare(
    'INSERT INTO plants (id, name, tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  )
  const event = db.prepare(
    'INSERT INTO events (id, type, payload, created_at, fanned_out_at) VALUES (?, ?, ?, ?, ?)',
  )
  return (id, body) => {
    const now = Date.now()
    plant.run(id, body.name, body.tag ?? null, now, now)
    const messageId = `msg_${now.toString(16).padStart(12, '0')}${randomBytes(10).toString('base64url')}`
    const payload = `{"type":"plant.created","timestamp":"${new Date(now).toISOString()}","data":${JSON.stringify(body)}}`
    event.run(messageId, 'plant.created', payload, now, now)
  }
}

const write = values.schema === 'service' ? serviceWriter() : bareWriter()
const begin = db.prepare('BEGIN IMMEDIATE')
const commit = db.prepare('COMMIT')

/** This turn's creates: [res, plant]. */
let turn = []

function commitTurn() {
  const batch = turn
  turn = []
  const answers = []
  begin.run()
  for (const [res, plant] of batch) {
    try {
      // JSON.parse has already rounded ids past 2^53; the reference stores what it parsed.
      write(BigInt(plant.id), plant)
      answers.push([res, 200, JSON.stringify(plant)])
    } catch {
      answers.push([res, 409, { error: 40901, message: 'A plant with this id already exists.' }])
    }
  }
  commit.run()
  for (const [res, status, body] of answers) answer(res, status, body)
}

function create(req, res) {
  readPlant(req, res, (plant) => {
    if (turn.length === 0) setImmediate(commitTurn)
    turn.push([res, plant])
  })
}

const server = createServer((req, res) => {
  if (req.headers.authorization !== expected) {
    return answer(res, 401, { error: 40103, message: 'The bearer token is not valid.' })
  }
  if (req.method === 'POST' && req.url === '/plants') return create(req, res)
  answer(res, 404, { error: 40401, message: 'No such route.' })
})
server.keepAliveTimeout = 5000

server.listen(Number(values.port), values.host, () => {
  const { address, port } = server.address()
  process.stdout.write(`listening on http://${address}:${port}\n`)
})
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () =>
    server.close(() => {
      db.close()
      process.exit(0)
    }),
  )
}
