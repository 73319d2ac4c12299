import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type BenchSchema, emptySchema } from './postgres.js'

const POSTGRES = process.env.TEST_DATABASE_URL
const TOKEN = 'pst_0123456789abcdef_reference-secret'
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** A schema of its own, dropped after the test. */
async function schema(): Promise<BenchSchema> {
  const made = await emptySchema(POSTGRES as string)
  cleanups.push(() => made.drop())
  return made
}

/** Starts bench/reference-pg.mjs and resolves with its URL once it listens. */
async function startReference(databaseUrl: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'reference-pg.mjs'), '--token', TOKEN, '--database-url', databaseUrl],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  // Stopped before its schema is dropped (cleanups run in order).
  cleanups.unshift(async () => {
    child.kill('SIGTERM')
    if (child.exitCode === null) await once(child, 'exit')
  })
  const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string]
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  if (!url) throw new Error(`reference did not start: ${line}`)
  return url
}

function post(url: string, body: string, token = TOKEN): Promise<Response> {
  return fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  })
}

// The PostgreSQL reference stands for "the least a server giving a create the same guarantees on
// PostgreSQL must do": its rows are committed before its responses, one statement a turn.
describe.skipIf(!POSTGRES)('bench/reference-pg.mjs', () => {
  it('answers 200 with the plant, then 409 for the same id, with its row, index entry and event committed', async () => {
    const { url: databaseUrl, client } = await schema()
    const url = await startReference(databaseUrl)

    const created = await post(url, '{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
    expect(created.status).toBe(200)
    expect(await created.text()).toBe('{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
    const requestId = created.headers.get('x-request-id')
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const again = await post(url, '{"id":9007199254740993,"name":"Again"}')
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ error: 40901 })

    const plants = await client.query('SELECT id::text, name, name_folded, tag, version FROM plants')
    expect(plants.rows).toEqual([
      { id: '9007199254740993', name: 'Monstera', name_folded: 'monstera', tag: 'aroid', version: 1 },
    ])
    const events = await client.query(
      'SELECT seq::text, type, payload, plant_id::text, actor, request_id, before FROM outbox',
    )
    // One event: the refused create wrote none. It keeps the change's facts as the service's row
    // does: the plant, the token's public id, the id of the response that made it, nothing before.
    expect(events.rows).toEqual([
      {
        seq: '1',
        type: 'plant.created',
        payload: expect.any(String),
        plant_id: '9007199254740993',
        actor: '{"tokenId":"0123456789abcdef"}',
        request_id: requestId,
        before: null,
      },
    ])
    expect(events.rows[0].payload).toMatch(
      /^\{"type":"plant\.created","timestamp":"[^"]+","data":\{"id":9007199254740993,"name":"Monstera","tag":"aroid"\}\}$/,
    )
    const indexes = await client.query(
      'SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname',
    )
    // The history's index is on (plant_id, seq), as the service's.
    const byPlant = await client.query(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'outbox_by_plant'`,
    )
    expect(byPlant.rows[0]?.indexdef).toMatch(/\(plant_id, seq\)/)
    expect(indexes.rows.map((r) => r.indexname)).toEqual([
      'outbox_by_plant',
      'outbox_pkey',
      'plants_by_created',
      'plants_by_folded_name',
      'plants_by_name',
      'plants_by_tag',
      'plants_by_updated',
      'plants_pkey',
    ])
  })

  it('commits the creates that arrive together, each answered for itself', async () => {
    const { url: databaseUrl, client } = await schema()
    const url = await startReference(databaseUrl)
    const bodies = Array.from({ length: 40 }, (_, i) => `{"id":${(i % 20) + 1},"name":"plant ${i}"}`)
    const statuses = await Promise.all(bodies.map(async (body) => (await post(url, body)).status))
    // Each id once created, once refused, whichever came first.
    expect(statuses.filter((s) => s === 200)).toHaveLength(20)
    expect(statuses.filter((s) => s === 409)).toHaveLength(20)
    expect((await client.query('SELECT count(*)::int AS n FROM plants')).rows[0].n).toBe(20)
    expect((await client.query('SELECT count(*)::int AS n FROM outbox')).rows[0].n).toBe(20)
  })

  it('refuses a wrong token with 401 and a bad body with 400, and a missing token or URL with exit 2', async () => {
    const { url: databaseUrl, client } = await schema()
    const url = await startReference(databaseUrl)
    expect((await post(url, '{"id":1,"name":"Fern"}', 'pst_other')).status).toBe(401)
    expect((await post(url, '{"id":1,')).status).toBe(400)
    expect((await post(url, '{"id":1}')).status).toBe(400)
    expect((await client.query('SELECT count(*)::int AS n FROM plants')).rows[0].n).toBe(0)
    for (const args of [
      ['--database-url', databaseUrl],
      ['--token', TOKEN],
    ]) {
      const child = spawn(process.execPath, [join(import.meta.dirname, 'reference-pg.mjs'), ...args])
      const [code] = await once(child, 'exit')
      expect(code).toBe(2)
    }
  })

  it("shares no code with the service: it imports Node's modules, the PostgreSQL driver and the bench's own", () => {
    const source = readFileSync(join(import.meta.dirname, 'reference-pg.mjs'), 'utf8')
    const imported = [...source.matchAll(/^import .* from '([^']+)'$/gm)].map((m) => m[1])
    expect(imported).toEqual(expect.arrayContaining(['pg', './bare-create.mjs']))
    for (const name of imported) expect(name).toMatch(/^(node:.*|pg|\.\/bare-create\.mjs)$/)
    expect(source).not.toMatch(/\bimport\(|require\(/)
  })
})
