import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { issueToken, ROOT, runCli, startServer } from './helpers/process.js'
import { tempDir } from './helpers/stores.js'

const TOKEN = 'pst_reference_token'
const stops: Array<() => void> = []
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})

/** Starts bench/reference.mjs and resolves with its URL once it listens. */
async function startReference(database: string, extra: string[] = []): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bench/reference.mjs'), '--token', TOKEN, '--database', database, ...extra],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  stops.push(() => child.kill('SIGTERM'))
  const [line] = (await once(child.stdout.setEncoding('utf8'), 'data')) as [string]
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  if (!url) throw new Error(`reference did not start: ${line}`)
  return url
}

function post(url: string, body: string): Promise<Response> {
  return fetch(`${url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  })
}

// The benchmark's durable reference (bench/reference.mjs) stands for "the storage design alone": what
// it writes per create is what its figures mean, so each of its schemas is held to its rows here.
describe('bench/reference.mjs', () => {
  it('with --schema service writes the plant and its outbox event on a database the service migrated', async () => {
    const database = join(tempDir(), 'reference.db')
    expect((await runCli(['migrate', '--database-url', `sqlite:${database}`])).code).toBe(0)
    const url = await startReference(database, ['--schema', 'service'])

    const created = await post(url, '{"id":42,"name":"Monstera","tag":"aroid"}')
    expect(created.status).toBe(200)
    expect(await created.json()).toEqual({ id: 42, name: 'Monstera', tag: 'aroid' })
    expect((await post(url, '{"id":7,"name":"Fern"}')).status).toBe(200)
    // A duplicate fails alone and writes no event.
    expect((await post(url, '{"id":42,"name":"Again"}')).status).toBe(409)

    const db = new Database(database, { readonly: true })
    try {
      const plants = db.prepare('SELECT id, name, tag, created_at, updated_at FROM plants ORDER BY id').all()
      expect(plants).toEqual([
        { id: 7, name: 'Fern', tag: null, created_at: expect.any(Number), updated_at: expect.any(Number) },
        {
          id: 42,
          name: 'Monstera',
          tag: 'aroid',
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
      ])
      const events = db
        .prepare('SELECT id, type, payload, fanned_out_at FROM events ORDER BY seq')
        .all() as Array<{
        id: string
        type: string
        payload: string
        fanned_out_at: number
      }>
      expect(events).toHaveLength(2)
      for (const event of events) {
        expect(event.id).toMatch(/^msg_[0-9a-f]{12}[A-Za-z0-9_-]{14}$/)
        expect(event.type).toBe('plant.created')
        expect(event.fanned_out_at).toEqual(expect.any(Number))
      }
      expect(JSON.parse(events[0]?.payload ?? '')).toEqual({
        type: 'plant.created',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        data: { id: 42, name: 'Monstera', tag: 'aroid' },
      })
      expect(JSON.parse(events[1]?.payload ?? '').data).toEqual({ id: 7, name: 'Fern' })
    } finally {
      db.close()
    }
  })

  it('by default writes one bare plants table and nothing else', async () => {
    const database = join(tempDir(), 'bare.db')
    const url = await startReference(database)
    expect((await post(url, '{"id":1,"name":"Monstera","tag":"aroid"}')).status).toBe(200)

    const db = new Database(database, { readonly: true })
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')")
        .pluck()
        .all()
      expect(tables).toEqual(['plants'])
      expect(db.prepare('SELECT id, name, tag FROM plants').all()).toEqual([
        { id: 1, name: 'Monstera', tag: 'aroid' },
      ])
    } finally {
      db.close()
    }
  })

  // With --sync off the reference stands for SQLite's own work alone: no commit may be followed by a
  // checkpoint, which would copy pages back and fsync inside it. SQLite's automatic checkpoint runs
  // once the log holds 1,000 frames and the next commit then rewinds it, so a log that runs past that
  // shows that none ran; the default reference, checkpointing as SQLite does, rewinds before.
  it.each(['off', 'full'])(
    'with --sync %s the log runs past 1,000 frames only if no checkpoint rewound it',
    async (sync) => {
      const database = join(tempDir(), `sync-${sync}.db`)
      const url = await startReference(database, ['--sync', sync])
      // One at a time, so that each create is a commit of its own, of at least one frame.
      for (let id = 1; id <= 1200; id++) {
        expect((await post(url, `{"id":${id},"name":"Fern"}`)).status).toBe(200)
      }
      // A rewound log is written again from its start, so the file is as long as the longest log.
      const frames = (statSync(`${database}-wal`).size - 32) / (4096 + 24)
      // 1,200 commits of a frame or more: past 1,000 only if no checkpoint rewound the log.
      expect(frames > 1050).toBe(sync === 'off')
    },
    60_000,
  )

  it('refuses an unknown schema or sync mode', async () => {
    for (const extra of [
      ['--schema', 'other'],
      ['--sync', 'normal'],
    ]) {
      const child = spawn(process.execPath, [
        join(ROOT, 'bench/reference.mjs'),
        '--token',
        TOKEN,
        '--database',
        join(tempDir(), 'x.db'),
        ...extra,
      ])
      const [code] = await once(child, 'exit')
      expect(code).toBe(2)
    }
  })
})

// The benchmark's `plantstore (no storage)` line stands for "the service's own work alone": the
// service must answer creates as it always does, and store nothing.
describe('bench/no-store.mjs', () => {
  it('makes the service answer every create as created and write nothing', async () => {
    const database = join(tempDir(), 'no-store.db')
    const url = `sqlite:${database}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const token = await issueToken(url, 'bench')
    const server = await startServer(['--database-url', url], {
      NODE_OPTIONS: `--import ${join(ROOT, 'bench/no-store.mjs')}`,
    })
    stops.push(() => void server.stop())
    const create = (body: string) =>
      fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      })

    // Twice: the first goes through the framework (the token's first use), the second through the
    // fast lane; both answer as a real create does, body and ETag.
    for (let i = 0; i < 2; i++) {
      const created = await create('{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
      expect(created.status).toBe(200)
      expect(created.headers.get('etag')).toMatch(/^"1-[A-Za-z0-9_-]{16}"$/)
      expect(await created.text()).toBe('{"id":9007199254740993,"name":"Monstera","tag":"aroid"}')
    }
    // Bad input is still refused before the store.
    expect((await create('{"id":1}')).status).toBe(400)
    const read = await fetch(`${server.url}/plants/9007199254740993`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(read.status).toBe(404)
    await server.stop()

    const db = new Database(database, { readonly: true })
    try {
      expect(db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(0)
      expect(db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(0)
    } finally {
      db.close()
    }
  })

  it("answers the creates of one turn together at the turn's end, as a group commit does", async () => {
    // The built class the service would use, changed by the module as in the service's process.
    await import(join(ROOT, 'bench/no-store.mjs'))
    const { SqlitePlantStore } = (await import(join(ROOT, 'dist/store/sqlite/plants.js'))) as {
      SqlitePlantStore: { prototype: { create(): Promise<string> } }
    }
    const answered: string[] = []
    const first = SqlitePlantStore.prototype.create().then((outcome) => answered.push(`first ${outcome}`))
    const second = SqlitePlantStore.prototype.create().then((outcome) => answered.push(`second ${outcome}`))
    // Not within the turn: every microtask queued so far has run, and neither is answered.
    for (let i = 0; i < 10; i++) await Promise.resolve()
    expect(answered).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    await Promise.all([first, second])
    expect(answered).toEqual(['first created', 'second created'])
  })
})
