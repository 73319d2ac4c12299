// The durable reference the benchmark also measures for POST /plants: the ceiling's create
// (bench/ceiling.mjs: bearer comparison, native JSON.parse, the same type checks) plus the storage
// design the project aims at, with nothing else: one SQLite table in WAL mode with
// synchronous=FULL, every create of one event-loop turn in one transaction, each answered after its
// commit (and so its fsync). No events, no indexes besides the id, no framework, no logging. It
// shows what durable group commit alone costs on this machine, against the same ceiling.
//
// With `--schema service` it writes each turn's creates through the service's own batch writer and
// event (the built dist/), on a database the service's `plantstore migrate` made: the plant row with
// its times (so also its tag index), its outbox event with the events table's indexes, and the
// fan-out to webhook deliveries. The two side by side show what the rows a create must write cost
// the same storage design.
//
// With `--sync off` it commits with synchronous=OFF and no automatic checkpoint: no fsync at all and
// no page copied back, so nothing is durable and the log only grows. That is not a design anyone may
// run; it measures SQLite's own work on the rows alone, the part of a create that no scheduling of
// fsyncs and checkpoints can take away.
//
//   node bench/reference.mjs --port 0 --token pst_… --database /tmp/…/reference.db [--schema service] [--sync off]
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
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
    sync: { type: 'string', default: 'full' },
  },
})
if (
  !values.token ||
  !values.database ||
  !['bare', 'service'].includes(values.schema) ||
  !['full', 'off'].includes(values.sync)
) {
  process.stderr.write(
    'reference: --token and --database are required; --schema is bare or service; --sync is full or off\n',
  )
  process.exit(2)
}
const expected = `Bearer ${values.token}`

const db = new Database(values.database)
db.pragma('journal_mode = WAL')
if (values.sync === 'off') {
  db.pragma('synchronous = OFF')
  db.pragma('wal_autocheckpoint = 0')
} else {
  db.pragma('synchronous = FULL')
}

// Each schema's writer commits one turn's plants in one transaction and says, for each, whether it
// was created (false: its id exists). JSON.parse has already rounded ids past 2^53; the reference
// stores what it parsed.
function bareWriter() {
  db.exec('CREATE TABLE IF NOT EXISTS plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT')
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)')
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  return (plants) => {
    begin.run()
    const created = plants.map((plant) => {
      try {
        insert.run(BigInt(plant.id), plant.name, plant.tag ?? null)
        return true
      } catch {
        return false
      }
    })
    commit.run()
    return created
  }
}

async function serviceWriter() {
  const { prepareBatchWriter } = await import('../dist/store/sqlite/batch.js')
  const { outboxRow } = await import('../dist/store/sqlite/fan-out.js')
  const { plantEvent } = await import('../dist/plants/events.js')
  const writeBatch = prepareBatchWriter(db)
  return (plants) => {
    const at = new Date()
    const rows = plants.map(({ id, name, tag }) => {
      const plant = tag === undefined ? { id: BigInt(id), name } : { id: BigInt(id), name, tag }
      const event = (stamp) => outboxRow(plantEvent('plant.created', plant, new Date(stamp)))
      return { kind: 'create', id: plant.id, name, tag: tag ?? null, event, idempotency: undefined }
    })
    return writeBatch(rows, at.getTime()).outcomes.map((outcome) => outcome === 'created')
  }
}

const write = values.schema === 'service' ? await serviceWriter() : bareWriter()

/** This turn's creates: [res, plant]. */
let turn = []

function commitTurn() {
  const batch = turn
  turn = []
  const created = write(batch.map(([, plant]) => plant))
  batch.forEach(([res, plant], i) => {
    if (created[i]) answer(res, 200, JSON.stringify(plant))
    else answer(res, 409, { error: 40901, message: 'A plant with this id already exists.' })
  })
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
