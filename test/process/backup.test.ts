import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import {
  BIN,
  ROOT,
  type RunningServer,
  runCli,
  runCliWithFileLimit,
  startServer,
} from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

/** A migrated database file in `dir` holding plants 1 to `count`, written directly; its path. */
async function liveDatabase(dir: string, count: number, name: (id: number) => string): Promise<string> {
  const db = join(dir, 'live.db')
  expect((await runCli(['migrate', '--database-url', `sqlite:${db}`])).code).toBe(0)
  const live = new Database(db)
  const insert = live.prepare(
    'INSERT INTO plants (id, name, name_folded, created_at, updated_at) VALUES (?, ?, ?, 0, 0)',
  )
  live.transaction(() => {
    // The names are folded already (lower-case ASCII).
    for (let id = 1; id <= count; id++) insert.run(id, name(id), name(id))
  })()
  live.close()
  return db
}

describe('plantstore backup (SQLite)', () => {
  const servers: RunningServer[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop()
  })

  it('writes a consistent copy while the server takes writes, and the copy restores', async () => {
    const dir = tempDir()
    const db = join(dir, 'live.db')
    const tokenFile = join(dir, 'token')
    const server = await startServer([
      '--database-url',
      `sqlite:${db}`,
      '--bootstrap-token-file',
      tokenFile,
      '--rate-limit',
      'off',
    ])
    servers.push(server)
    const token = readFileSync(tokenFile, 'utf8').trim()
    const create = (id: number) =>
      fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}` }),
      }).then((r) => r.status)

    // Writers run without pause until the backup has finished.
    let next = 1
    let acknowledged = 0
    let firstAcknowledged: number | undefined
    let writing = true
    const writer = async () => {
      while (writing) {
        const id = next++
        if ((await create(id)) === 200) {
          acknowledged++
          firstAcknowledged = Math.min(firstAcknowledged ?? id, id)
        }
      }
    }
    const writers = Promise.all([writer(), writer(), writer(), writer()])
    while (acknowledged < 200) await new Promise((resolve) => setTimeout(resolve, 10))
    const before = acknowledged
    const backupFile = join(dir, 'backups', 'copy.db')
    const result = await runCli(['backup', backupFile, '--database-url', `sqlite:${db}`])
    const after = acknowledged
    writing = false
    await writers
    expect(result.code).toBe(0)
    expect(result.stderr).toContain('backup written')

    const copy = new Database(backupFile, { readonly: true })
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    const count = copy.prepare('SELECT count(*) FROM plants').pluck().get() as number
    copy.close()
    expect(count).toBeGreaterThanOrEqual(before)
    expect(count).toBeLessThanOrEqual(after + 4)

    // A second backup to the same file is refused rather than overwriting it.
    const again = await runCli(['backup', backupFile, '--database-url', `sqlite:${db}`])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already exists')

    // Restore: the copy is a complete database file on its own.
    const restored = join(dir, 'restored.db')
    copyFileSync(backupFile, restored)
    const revived = await startServer(['--database-url', `sqlite:${restored}`])
    servers.push(revived)
    // A create may be shed (503) on a loaded machine, so read one that was acknowledged before the backup.
    const id = firstAcknowledged as number
    const read = await fetch(`${revived.url}/plants/${id}`, { headers: { authorization: `Bearer ${token}` } })
    expect(read.status).toBe(200)
    expect(await read.json()).toEqual({ id, name: `plant ${id}` })
  })

  it('refuses a folder, an existing file and the database itself as the target, changing none', async () => {
    const dir = tempDir()
    const db = await liveDatabase(dir, 3, (id) => `plant ${id}`)
    const other = join(dir, 'other.db')
    copyFileSync(db, other)
    const folder = join(dir, 'backups')
    mkdirSync(folder)
    const databaseBefore = readFileSync(db)
    for (const [target, said] of [
      [
        folder,
        `${folder} is a folder: name the backup file in it, such as ${join(folder, 'plantstore.db')}; nothing was written`,
      ],
      [
        `${folder}/`,
        `${folder}/ is a folder: name the backup file in it, such as ${join(folder, 'plantstore.db')}; nothing was written`,
      ],
      [other, `${other} already exists; backups never overwrite`],
      [db, `${db} already exists; backups never overwrite`],
    ] as const) {
      const result = await runCli(['backup', target, '--database-url', `sqlite:${db}`])
      expect(result).toMatchObject({ code: 1, stderr: `plantstore: ${said}\n` })
    }
    expect(readdirSync(folder)).toEqual([])
    expect(readFileSync(other).equals(databaseBefore)).toBe(true)
    const live = new Database(db, { readonly: true })
    expect(live.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(3)
    live.close()
  })

  it('restores by the documented steps while another process still has the database open', async () => {
    const dir = tempDir()
    const db = join(dir, 'data', 'plantstore.db')
    const tokenFile = join(dir, 'token')
    const args = ['--database-url', `sqlite:${db}`, '--rate-limit', 'off']
    const server = await startServer([...args, '--bootstrap-token-file', tokenFile])
    servers.push(server)
    // Another instance on the same file, which the restore steps do not stop.
    const other = await startServer(args)
    servers.push(other)
    const token = readFileSync(tokenFile, 'utf8').trim()
    const create = (url: string, id: number) =>
      fetch(`${url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}` }),
      }).then((r) => r.status)
    for (let id = 1; id <= 20; id++) expect(await create(server.url, id)).toBe(200)
    const backup = await runCli([
      'backup',
      join(dir, 'backups', 'plantstore-2026-01-31.db'),
      ...args.slice(0, 2),
    ])
    expect(backup.code).toBe(0)
    // Written after the backup, so not restored: some of them live only in the write-ahead log.
    for (let id = 21; id <= 40; id++) expect(await create(other.url, id)).toBe(200)

    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8')
    const restore = operations.indexOf('To restore, stop the server')
    expect(restore).toBeGreaterThan(-1)
    const start = operations.indexOf('```sh\n', restore)
    const steps = operations
      .slice(start + 6, operations.indexOf('\n```\n', start))
      .split('\n')
      .filter((line) => !line.startsWith('./bin/plantstore serve'))
      .map((line) => line.replaceAll(' /backups/', ' ./backups/'))
      .join('\n')
    const restored = await new Promise<number>((resolve) => {
      execFile(
        'sh',
        ['-ec', steps],
        { cwd: dir, env: { ...process.env, SERVER_PID: String(server.process.pid) } },
        (error) => resolve(error ? Number(error.code) : 0),
      )
    })
    expect(restored).toBe(0)
    expect(await server.exited).toBe(0)
    expect(await create(other.url, 41)).toBe(503)
    await other.stop()

    const copy = new Database(db, { readonly: true })
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(copy.prepare('SELECT max(id) FROM plants').pluck().get()).toBe(20)
    copy.close()
    const revived = await startServer(args)
    servers.push(revived)
    expect(await create(revived.url, 21)).toBe(200)
  })

  it('fails with no file left behind when the copy runs out of room, so that a retry can succeed', async () => {
    const dir = tempDir()
    const db = await liveDatabase(dir, 5000, (id) => `plant number ${id}`)
    const backupFile = join(dir, 'copy.db')
    // A 64 KiB limit on the size of any file this process writes stands for a disk that fills up.
    const full = await runCliWithFileLimit(64, ['backup', backupFile, '--database-url', `sqlite:${db}`])
    expect(full.code).toBe(1)
    expect(full.stderr).toMatch(/^plantstore: backup to .*copy\.db failed, and nothing was left there: /)
    expect(existsSync(backupFile)).toBe(false)

    const retried = await runCli(['backup', backupFile, '--database-url', `sqlite:${db}`])
    expect(retried.code).toBe(0)
    const copy = new Database(backupFile, { readonly: true })
    expect(copy.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(5000)
    copy.close()
  })

  it('leaves nothing at the path when ended midway, so that a retry can succeed', async () => {
    const dir = tempDir()
    // Enough plants, with their search trigrams and index entries, for a copy long enough to be ended
    // midway.
    const db = await liveDatabase(dir, 100_000, (id) => `plant number ${id} with a longer name`)
    const backupFile = join(dir, 'copy.db')
    const child = spawn(BIN, ['backup', backupFile, '--database-url', `sqlite:${db}`], { cwd: ROOT })
    // Killed (a timeout, an operator's Ctrl-C) once the copy has begun to be written.
    const copying = () =>
      readdirSync(dir).some((name) => name.startsWith('copy.db') && statSync(join(dir, name)).size > 0)
    const deadline = Date.now() + 30_000
    while (!copying() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2))
    child.kill('SIGKILL')
    await once(child, 'exit')
    expect(existsSync(backupFile)).toBe(false)

    const retried = await runCli(['backup', backupFile, '--database-url', `sqlite:${db}`])
    expect(retried.code).toBe(0)
    const copy = new Database(backupFile, { readonly: true })
    expect(copy.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(100_000)
    copy.close()
  })
})

describe('plantstore backup on PostgreSQL', () => {
  it('names pg_dump at once, before connecting (so before creating or migrating any schema)', async () => {
    // Nothing listens on port 1: a command that connected first would fail as unreachable instead.
    const target = join(tempDir(), 'never.db')
    const result = await runCli([
      'backup',
      target,
      '--database-url',
      'postgres://plantstore:x@127.0.0.1:1/plantstore',
    ])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(
      /^plantstore: backup copies SQLite databases only; for PostgreSQL use pg_dump/,
    )
    expect(existsSync(target)).toBe(false)
  })
})
