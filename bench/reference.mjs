// The durable reference the benchmark holds the service's creates to: the smallest server that gives
// a create the same guarantees, sharing no code with the service. Bare node:http, the same checks as
// the ceiling (bench/ceiling.mjs), and SQLite through better-sqlite3 in WAL mode with
// synchronous=FULL: every create that arrives in one turn of the event loop is written in one
// transaction, and each gets its response only after that transaction's COMMIT, so a create responded to
// survives a power cut. No framework, no logging, no metrics.
//
// With `--schema service` (the one the benchmark measures) each create writes what the service's
// features need of it: the plant row (id primary key, name, tag, version, times), its entry in the
// (tag, id) index that listing by tag reads, and one outbox row with an integer key that webhooks
// are fanned out from, never handed out twice (AUTOINCREMENT): a subscription receives the events
// after a seq, and an event's id is made from it. That outbox row also keeps the change's facts, as
// the service's does: the plant's id (with its entry in the (plant_id, seq) index a plant's history
// reads), who made it (the token's public id as JSON), the request's id (sent back as X-Request-Id)
// and the plant before the change (null for a create). For finding plants it also writes the name folded
// as search compares it (NFC, lower case, final sigma as σ), that name's trigrams in an FTS5 index
// kept by triggers, and its entries in the (name, id), (created_at, id) and (updated_at, id) indexes
// the sorted listings walk. The service writes the same, and no other index. With `--schema bare`
// it writes the plant's id, name and tag alone: what group commit costs before any of the rows a
// feature needs.
//
// It makes its own schema in its own database file, and follows the create contract as far as the
// load needs: the bearer token, a JSON body, 200 with the plant, 409 when the id exists.
//
//   node bench/reference.mjs --port 0 --token pst_… --database /tmp/…/reference.db [--schema service|bare]
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { readPlant, respond } from './bare-create.mjs'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
    database: { type: 'string' },
    schema: { type: 'string', default: 'service' },
  },
})
if (!values.token || !values.database || !['bare', 'service'].includes(values.schema)) {
  process.stderr.write('reference: --token and --database are required; --schema is service or bare\n')
  process.exit(2)
}
const expected = `Bearer ${values.token}`
// Who makes every create: the token's public id, the part between its prefix and its secret.
const actor = JSON.stringify({ tokenId: /^[a-z]+_([^_]+)_/.exec(values.token)?.[1] ?? values.token })

const db = new Database(values.database)
db.pragma('journal_mode = WAL')
db.pragma('synchronous = FULL')

const SCHEMAS = {
  service: `
    CREATE TABLE IF NOT EXISTS plants (
      id INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      tag TEXT,
      version INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      name_folded TEXT NOT NULL
    ) STRICT;
    CREATE INDEX IF NOT EXISTS plants_by_tag ON plants (tag, id) WHERE tag IS NOT NULL;
    CREATE INDEX IF NOT EXISTS plants_by_name ON plants (name, id);
    CREATE INDEX IF NOT EXISTS plants_by_created ON plants (created_at, id);
    CREATE INDEX IF NOT EXISTS plants_by_updated ON plants (updated_at, id);
    CREATE VIRTUAL TABLE IF NOT EXISTS plant_names USING fts5(
      name_folded, content = 'plants', content_rowid = 'id', columnsize = 0,
      tokenize = 'trigram case_sensitive 1'
    );
    CREATE TRIGGER IF NOT EXISTS plant_names_insert AFTER INSERT ON plants BEGIN
      INSERT INTO plant_names (rowid, name_folded) VALUES (new.id, new.name_folded);
    END;
    CREATE TABLE IF NOT EXISTS outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      type TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      plant_id INTEGER,
      actor TEXT,
      request_id TEXT,
      before TEXT
    ) STRICT;
    CREATE INDEX IF NOT EXISTS outbox_by_plant ON outbox (plant_id, seq) WHERE plant_id IS NOT NULL;`,
  bare: 'CREATE TABLE IF NOT EXISTS plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT;',
}
db.exec(SCHEMAS[values.schema])

const begin = db.prepare('BEGIN IMMEDIATE')
const commit = db.prepare('COMMIT')
const rollback = db.prepare('ROLLBACK')

/** Writes one plant (and, with the service's schema, its event); false when its id exists. */
const insert =
  values.schema === 'service'
    ? (() => {
        const plant = db.prepare(
          'INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_folded) VALUES (?, ?, ?, 1, ?, ?, ?) ON CONFLICT (id) DO NOTHING',
        )
        // A create has no plant before it: `before` stays null.
        const event = db.prepare(
          'INSERT INTO outbox (type, payload, created_at, plant_id, actor, request_id) VALUES (?, ?, ?, ?, ?, ?)',
        )
        return (p, json, now, requestId) => {
          const folded = p.name.normalize('NFC').toLowerCase().replaceAll('ς', 'σ')
          if (plant.run(p.id, p.name, p.tag ?? null, now, now, folded).changes === 0) return false
          const at = new Date(now).toISOString()
          const payload = `{"type":"plant.created","timestamp":"${at}","data":${json}}`
          event.run('plant.created', payload, now, p.id, actor, requestId)
          return true
        }
      })()
    : (() => {
        const plant = db.prepare(
          'INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING',
        )
        return (p) => plant.run(p.id, p.name, p.tag ?? null).changes === 1
      })()

/** The creates of this turn: [res, plant, its JSON, its request id]. */
let turn = []

/** One transaction for the turn's creates; each gets its response once it has committed, or 500 if it did not. */
function commitTurn() {
  const batch = turn
  turn = []
  const now = Date.now()
  let created
  try {
    begin.run()
    created = batch.map(([, plant, json, requestId]) => insert(plant, json, now, requestId))
    commit.run()
  } catch {
    if (db.inTransaction) rollback.run()
    for (const [res] of batch) respond(res, 500, { error: 50001, message: 'The create was not stored.' })
    return
  }
  batch.forEach(([res, , json, requestId], i) => {
    if (created[i]) respond(res, 200, json, { 'x-request-id': requestId })
    else respond(res, 409, { error: 40901, message: 'A plant with this id already exists.' })
  })
}

/**
 * The id exactly as sent: JSON.parse rounds integers past 2^53, and the service stores every int64
 * exactly, so the digits are read from the body itself when they are the id JSON.parse read.
 */
function exactId(text, parsed) {
  const digits = /"id"\s*:\s*(-?\d{1,19})\s*[,}]/.exec(text)?.[1]
  return digits !== undefined && Number(digits) === parsed ? BigInt(digits) : BigInt(parsed)
}

function create(req, res) {
  readPlant(req, res, (plant, text) => {
    const id = exactId(text, plant.id)
    const tag = plant.tag === undefined ? '' : `,"tag":${JSON.stringify(plant.tag)}`
    const json = `{"id":${id},"name":${JSON.stringify(plant.name)}${tag}}`
    if (turn.length === 0) setImmediate(commitTurn)
    turn.push([res, { id, name: plant.name, tag: plant.tag }, json, randomUUID()])
  })
}

const server = createServer((req, res) => {
  if (req.headers.authorization !== expected) {
    return respond(res, 401, { error: 40103, message: 'The bearer token is not valid.' })
  }
  if (req.method === 'POST' && req.url === '/plants') return create(req, res)
  respond(res, 404, { error: 40401, message: 'No such route.' })
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
