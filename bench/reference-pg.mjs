// The durable reference on PostgreSQL: the smallest server that gives a create the guarantees the
// service gives it on PostgreSQL, sharing no code with the service. Bare node:http, the same checks
// as the ceiling (bench/bare-create.mjs), and one connection through `pg`: the creates that arrive in
// one turn of the event loop are committed together, in one statement that inserts their plant rows
// (id primary key, name, tag, version, times, the name folded as search compares it, the (tag, id)
// index entry of a tagged one, the folded name's trigrams in a pg_trgm GIN index and the entries of
// the (name, id), (created_at, id) and (updated_at, id) indexes the sorted listings walk) and, for
// those inserted, one outbox row each under an integer key, with the change's facts the service keeps
// in it (the plant's id and its entry in the (plant_id, seq) index a plant's history reads, who made it
// as JSON, the request's id, sent back as X-Request-Id, and the plant before, null for a create). A statement outside BEGIN is a
// transaction of its own, and with the server's default synchronous_commit each create gets its response
// only once its COMMIT is flushed. Creates that arrive while a batch is being committed wait for the
// next one. No framework, no logging, no metrics, no lock.
//
// It makes its own tables in the first schema of the URL's search path (give one of its own, as
// bench/run.ts does, `?options=-c search_path=…`), and follows the create contract as far as the load
// needs: the bearer token, a JSON body, 200 with the plant, 409 when the id exists.
//
//   node bench/reference-pg.mjs --port 0 --token pst_… --database-url postgres://…
// prints `listening on http://127.0.0.1:PORT` once it accepts connections.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { readPlant, respond } from './bare-create.mjs'

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
    'database-url': { type: 'string' },
  },
})
if (!values.token || !values['database-url']?.startsWith('postgres')) {
  process.stderr.write('reference-pg: --token and --database-url postgres://… are required\n')
  process.exit(2)
}
const expected = `Bearer ${values.token}`
// Who makes every create: the token's public id, the part between its prefix and its secret.
const actor = JSON.stringify({ tokenId: /^[a-z]+_([^_]+)_/.exec(values.token)?.[1] ?? values.token })

const client = new pg.Client({ connectionString: values['database-url'] })
await client.connect()
await client.query(`
  CREATE TABLE IF NOT EXISTS plants (
    id bigint PRIMARY KEY,
    name text NOT NULL,
    tag text,
    version integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    name_folded text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS plants_by_tag ON plants (tag, id) WHERE tag IS NOT NULL;
  CREATE INDEX IF NOT EXISTS plants_by_name ON plants (name COLLATE "C", id);
  CREATE INDEX IF NOT EXISTS plants_by_created ON plants (created_at, id);
  CREATE INDEX IF NOT EXISTS plants_by_updated ON plants (updated_at, id);
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  DO $$
  DECLARE
    trgm name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                  WHERE e.extname = 'pg_trgm');
  BEGIN
    EXECUTE format('CREATE INDEX IF NOT EXISTS plants_by_folded_name ON plants USING gin (name_folded %I.gin_trgm_ops)', trgm);
  END
  $$;
  CREATE TABLE IF NOT EXISTS outbox (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type text NOT NULL,
    payload text NOT NULL,
    created_at timestamptz NOT NULL,
    plant_id bigint,
    actor text,
    request_id text,
    before text
  );
  CREATE INDEX IF NOT EXISTS outbox_by_plant ON outbox (plant_id, seq) WHERE plant_id IS NOT NULL`)

// The plants inserted (ON CONFLICT skips a taken id), and one event for each, in one statement. A
// create has no plant before it: `before` stays null.
const CREATE = `
  WITH created AS (
    INSERT INTO plants (id, name, tag, version, created_at, updated_at, name_folded)
    SELECT id, name, tag, 1, $5, $5, folded
    FROM unnest($1::bigint[], $2::text[], $3::text[], $6::text[]) AS t(id, name, tag, folded)
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), events AS (
    INSERT INTO outbox (type, payload, created_at, plant_id, actor, request_id)
    SELECT 'plant.created', e.payload, $5, e.id, $7, e.request_id
    FROM unnest($1::bigint[], $4::text[], $8::text[]) WITH ORDINALITY AS e(id, payload, request_id, line)
    JOIN created c ON c.id = e.id
    ORDER BY e.line
  )
  SELECT id::text AS id FROM created`

/** The creates waiting for the next batch: [res, plant, its JSON, its request id]. */
const queue = []
let committing = false

/** One statement for the batch; each create gets its response once it has committed, or 500 if it did not. */
async function commitQueued() {
  committing = true
  while (queue.length > 0) {
    // A second create of an id in one batch is refused, as a second INSERT of it would be.
    const batch = []
    const seen = new Set()
    const refused = []
    for (const item of queue.splice(0)) {
      const id = item[1].id.toString()
      if (seen.has(id)) refused.push(item)
      else {
        seen.add(id)
        batch.push(item)
      }
    }
    const now = new Date()
    const at = now.toISOString()
    let created
    try {
      const result = await client.query(CREATE, [
        batch.map(([, p]) => p.id.toString()),
        batch.map(([, p]) => p.name),
        batch.map(([, p]) => p.tag ?? null),
        batch.map(([, , json]) => `{"type":"plant.created","timestamp":"${at}","data":${json}}`),
        now,
        batch.map(([, p]) => p.name.normalize('NFC').toLowerCase().replaceAll('ς', 'σ')),
        actor,
        batch.map(([, , , requestId]) => requestId),
      ])
      created = new Set(result.rows.map((r) => r.id))
    } catch {
      for (const [res] of [...batch, ...refused]) {
        respond(res, 500, { error: 50001, message: 'The create was not stored.' })
      }
      continue
    }
    for (const [res, plant, json, requestId] of batch) {
      if (created.has(plant.id.toString())) respond(res, 200, json, { 'x-request-id': requestId })
      else respond(res, 409, { error: 40901, message: 'A plant with this id already exists.' })
    }
    for (const [res] of refused)
      respond(res, 409, { error: 40901, message: 'A plant with this id already exists.' })
  }
  committing = false
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
    if (queue.length === 0 && !committing) setImmediate(() => void commitQueued())
    queue.push([res, { id, name: plant.name, tag: plant.tag }, json, randomUUID()])
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
    server.close(async () => {
      while (committing) await new Promise((resolve) => setTimeout(resolve, 5))
      await client.end()
      process.exit(0)
    }),
  )
}
