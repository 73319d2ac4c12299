import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'

const TOKEN = 'pst_0123456789abcdef_reference-secret'
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-test-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Starts bench/reference.mjs and resolves with its URL once it listens. */
async function startReference(database: string, extra: string[] = []): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'reference.mjs'), '--token', TOKEN, '--database', database, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  cleanups.unshift(() => child.kill('SIGTERM'))
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

/** Reads the database as another process would, after the responses: only what was committed. */
function committed<T>(database: string, read: (db: Database.Database) => T): T {
  const db = new Database(database, { readonly: true })
  try {
    return read(db)
  } finally {
    db.close()
  }
}

// The durable reference stands for "the least a server giving a create the same guarantees must do":
// what it writes per create, and when it responds, is what the service's figures are judged against.
describe('bench/reference.mjs', () => {
  it('answers 200 with the plant, then 409 for the same id, with its row, index entry and event committed', async () => {
    const database = join(tempDir(), 'reference.db')
    const url = await startReference(database, ['--schema', 'service'])

    // An id past 2^53 comes back and is stored exactly, as the service stores it.
    const created = await post(url, '{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
    expect(created.status).toBe(200)
    expect(await created.text()).toBe('{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
    const requestId = created.headers.get('x-request-id')
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const again = await post(url, '{"id":9007199254740993,"name":"Again"}')
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ error: 40901 })

    committed(database, (db) => {
      db.defaultSafeIntegers(true)
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.prepare('SELECT id, name, tag, version, created_at, updated_at FROM plants').all()).toEqual([
        {
          id: 9007199254740993n,
          name: 'Monstera',
          tag: 'aroid',
          version: 1n,
          created_at: expect.any(BigInt),
          updated_at: expect.any(BigInt),
        },
      ])
      // Read through the (tag, id) index alone: SQLite refuses INDEXED BY when the index cannot serve.
      expect(
        db.prepare("SELECT tag, id FROM plants INDEXED BY plants_by_tag WHERE tag = 'aroid'").all(),
      ).toEqual([{ tag: 'aroid', id: 9007199254740993n }])
      // The folded name and its trigrams, as the service writes them, and the sort indexes' entries.
      expect(db.prepare('SELECT name_folded FROM plants').pluck().all()).toEqual(['monstera'])
      expect(
        db.prepare(`SELECT rowid FROM plant_names WHERE plant_names MATCH '"nste"'`).pluck().all(),
      ).toEqual([9007199254740993n])
      for (const [index, column] of [
        ['plants_by_name', "name > ''"],
        ['plants_by_created', 'created_at > 0'],
        ['plants_by_updated', 'updated_at > 0'],
      ])
        expect(
          db.prepare(`SELECT count(*) FROM plants INDEXED BY ${index} WHERE ${column}`).pluck().get(),
        ).toBe(1n)
      const events = db
        .prepare('SELECT seq, type, payload, created_at, plant_id, actor, request_id, before FROM outbox')
        .all() as Array<{
        seq: bigint
        type: string
        payload: string
      }>
      // One event: the refused create wrote none. It keeps the change's facts as the service's row
      // does: the plant, the token's public id, the id of the response that made it, nothing before.
      expect(events).toEqual([
        {
          seq: 1n,
          type: 'plant.created',
          payload: expect.any(String),
          created_at: expect.any(BigInt),
          plant_id: 9007199254740993n,
          actor: '{"tokenId":"0123456789abcdef"}',
          request_id: requestId,
          before: null,
        },
      ])
      // A plant's history is read through the (plant_id, seq) index.
      expect(
        db
          .prepare('SELECT seq FROM outbox INDEXED BY outbox_by_plant WHERE plant_id = ? ORDER BY seq DESC')
          .pluck()
          .all(9007199254740993n),
      ).toEqual([1n])
      expect(
        JSON.parse((events[0] as { payload: string }).payload.replace(/"id":(\d+)/, '"id":"$1"')),
      ).toEqual({
        type: 'plant.created',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        data: { id: '9007199254740993', name: 'Monstera', tag: 'aroid' },
      })
    })
  })

  it('commits the creates that arrive together in one turn, each answered for itself', async () => {
    const database = join(tempDir(), 'reference.db')
    const url = await startReference(database)
    const bodies = Array.from({ length: 40 }, (_, i) => `{"id":${(i % 20) + 1},"name":"plant ${i}"}`)
    const statuses = await Promise.all(bodies.map(async (body) => (await post(url, body)).status))
    // Each id once created, once refused, whichever came first.
    expect(statuses.filter((s) => s === 200)).toHaveLength(20)
    expect(statuses.filter((s) => s === 409)).toHaveLength(20)
    committed(database, (db) => {
      expect(db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(20)
      expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(20)
      // An untagged plant has no entry in the partial index.
      expect(
        db
          .prepare('SELECT count(*) FROM plants INDEXED BY plants_by_tag WHERE tag IS NOT NULL')
          .pluck()
          .get(),
      ).toBe(0)
    })
  })

  it('refuses a wrong token with 401 and a bad body with 400, and stores neither', async () => {
    const database = join(tempDir(), 'reference.db')
    const url = await startReference(database)
    expect((await post(url, '{"id":1,"name":"Fern"}', 'pst_other')).status).toBe(401)
    expect((await post(url, '{"id":1,')).status).toBe(400)
    expect((await post(url, '{"id":1.5,"name":"Fern"}')).status).toBe(400)
    expect((await post(url, '{"id":1}')).status).toBe(400)
    committed(database, (db) => expect(db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(0))
  })

  it('with --schema bare writes one plants table of id, name and tag, and nothing else', async () => {
    const database = join(tempDir(), 'bare.db')
    const url = await startReference(database, ['--schema', 'bare'])
    expect((await post(url, '{"id":1,"name":"Monstera","tag":"aroid"}')).status).toBe(200)
    expect((await post(url, '{"id":1,"name":"Monstera"}')).status).toBe(409)
    committed(database, (db) => {
      expect(
        db.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')").pluck().all(),
      ).toEqual(['plants'])
      expect(db.prepare('SELECT id, name, tag FROM plants').all()).toEqual([
        { id: 1, name: 'Monstera', tag: 'aroid' },
      ])
    })
  })

  it('refuses an unknown schema, or a missing token or database, with exit 2', async () => {
    for (const args of [
      ['--token', TOKEN, '--database', join(tempDir(), 'x.db'), '--schema', 'other'],
      ['--database', join(tempDir(), 'x.db')],
      ['--token', TOKEN],
    ]) {
      const child = spawn(process.execPath, [join(import.meta.dirname, 'reference.mjs'), ...args])
      const [code] = await once(child, 'exit')
      expect(code).toBe(2)
    }
  })

  it("shares no code with the service: it imports Node's modules, the SQLite driver and the bench's own", () => {
    const sources = ['reference.mjs', 'bare-create.mjs'].map((file) =>
      readFileSync(join(import.meta.dirname, file), 'utf8'),
    )
    const imported = sources.flatMap((source) =>
      [...source.matchAll(/^import .* from '([^']+)'$/gm)].map((m) => m[1]),
    )
    expect(imported).toEqual(expect.arrayContaining(['better-sqlite3', './bare-create.mjs']))
    for (const name of imported) expect(name).toMatch(/^(node:.*|better-sqlite3|\.\/bare-create\.mjs)$/)
    for (const source of sources) expect(source).not.toMatch(/\bimport\(|require\(/)
  })
})
