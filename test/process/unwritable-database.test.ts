import { execFile } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { admin } from '../helpers/postgres.js'
import { BIN, type CliResult, ROOT, runCli, runCliWithFileLimit, startServer } from '../helpers/process.js'
import { lacking } from '../helpers/requirement.js'
import { postgresKind, tempDir } from '../helpers/stores.js'

// A file another user owns stands for one this process may only read: as root every file is
// writable, so the command runs as nobody (chattr +i is not reliable in containers).
const SETPRIV = ['--reuid=nobody', '--regid=nogroup', '--clear-groups']
const canDropPrivileges = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv')

/** Runs the CLI as nobody; a server that does start is stopped after 10 s. */
function runAsNobody(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'setpriv',
      [...SETPRIV, BIN, ...args],
      { cwd: ROOT, timeout: 10_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })
}

/**
 * A migrated database file owned by root, made 0644, in a folder anyone may write, as in /tmp (or,
 * with `folderMode` 0o755, one only its owner may write).
 */
async function readOnlyDatabase(
  prepare: (db: Database.Database) => void = () => {},
  folderMode = 0o1777,
): Promise<string> {
  const dir = join(tempDir(), 'shared')
  mkdirSync(dir)
  chmodSync(join(dir, '..'), 0o755)
  chmodSync(dir, folderMode)
  const url = `sqlite:${join(dir, 'ro.db')}`
  expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
  const db = new Database(join(dir, 'ro.db'))
  prepare(db)
  db.close()
  // A new database is its owner's alone (0600); this one is shared for reading.
  chmodSync(join(dir, 'ro.db'), 0o644)
  return url
}

describe.skipIf(lacking(canDropPrivileges, 'dropping privileges needs root and /usr/bin/setpriv'))(
  'a SQLite database this user cannot write',
  () => {
    it('is refused by migrate: exit 1 and one line, never "schema is up to date"', async () => {
      const url = await readOnlyDatabase()
      const result = await runAsNobody(['migrate', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^plantstore: cannot write to .*ro\.db/),
      ])
    })

    it('is refused by serve at start: exit 1 and one line, never a ready server that fails each write', async () => {
      const url = await readOnlyDatabase()
      const result = await runAsNobody(['serve', '--port', '0', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stdout).not.toContain('listening on')
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^plantstore: cannot write to .*ro\.db/),
      ])
    })

    it('in a folder this user may not enter is refused with one line naming it', async () => {
      const url = await readOnlyDatabase()
      chmodSync(join(url.slice('sqlite:'.length), '..'), 0o700)
      const result = await runAsNobody(['migrate', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^plantstore: cannot open .*ro\.db \(unable to open database file\): it must be a file/,
        ),
      ])
    })

    it('is read by export, backup and token list, which write nothing to it', async () => {
      const url = await readOnlyDatabase((db) => {
        db.prepare(
          "INSERT INTO plants (id, name, name_folded, created_at, updated_at) VALUES (7, 'fern', 'fern', 0, 0)",
        ).run()
      })
      const path = url.slice('sqlite:'.length)
      const exported = await runAsNobody(['export', '--database-url', url])
      expect(exported).toMatchObject({ code: 0, stdout: '{"id":7,"name":"fern"}\n' })
      const listed = await runAsNobody(['token', 'list', '--json', '--database-url', url])
      expect(listed).toMatchObject({ code: 0, stdout: '[]\n' })
      const copy = join(path, '..', 'copy.db')
      const backedUp = await runAsNobody(['backup', copy, '--database-url', url])
      expect(backedUp.stderr).toMatch(/^backup written to/)
      expect(statSync(copy).size).toBeGreaterThan(0)
    })

    it('in a folder only its owner may write (0755) is refused by export, backup and token list, with one line each', async () => {
      // SQLite reads a database in WAL mode only where it can make the -wal and -shm files beside it.
      const url = await readOnlyDatabase(() => {}, 0o755)
      const path = url.slice('sqlite:'.length)
      const before = readFileSync(path)
      for (const args of [['export'], ['token', 'list'], ['backup', join(tempDir(), 'copy.db')]]) {
        const result = await runAsNobody([...args, '--database-url', url])
        expect(result.code).toBe(1)
        expect(result.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            /^plantstore: cannot write to .*ro\.db .*this user needs write access to the file and its folder$/,
          ),
        ])
      }
      expect(readdirSync(join(path, '..'))).toEqual(['ro.db'])
      expect(readFileSync(path).equals(before)).toBe(true)
    })

    it('is refused by export when its schema lacks a migration, naming plantstore migrate', async () => {
      const url = await readOnlyDatabase((db) => {
        db.exec('DROP TABLE leases; DELETE FROM schema_migrations WHERE version = 8')
      })
      const result = await runAsNobody(['export', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^plantstore: cannot write to .*ro\.db .*; its schema must be migrated first \(008_leases not applied\): run `plantstore migrate` once it can be written$/,
        ),
      ])
    })

    it('is refused by serve --workers 2 before any worker starts', async () => {
      const url = await readOnlyDatabase()
      const result = await runAsNobody(['serve', '--port', '0', '--workers', '2', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stdout).not.toContain('worker ready')
      expect(result.stderr).toMatch(/^plantstore: cannot write to .*ro\.db/)
    })
  },
)

describe.skipIf(lacking(canDropPrivileges, 'dropping privileges needs root and /usr/bin/setpriv'))(
  'a SQLite database made read-only while served',
  () => {
    it('answers its plant writes 503 meanwhile, and takes them again once it is writable', async () => {
      const dir = tempDir()
      chmodSync(dir, 0o777)
      const path = join(dir, 'p.db')
      const tokenFile = join(dir, 'token')
      const server = await startServer(
        ['--database-url', `sqlite:${path}`, '--bootstrap-token-file', tokenFile, '--rate-limit', 'off'],
        {},
        SETPRIV,
      )
      try {
        const token = readFileSync(tokenFile, 'utf8').trim()
        const send = (method: string, url: string, body?: object) =>
          fetch(`${server.url}${url}`, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: body && JSON.stringify(body),
          })
        // Made read-only before the first plant write opens the writer's own connection.
        chmodSync(path, 0o444)
        const refused = await send('POST', '/plants', { id: 1, name: 'a' })
        expect(refused.status).toBe(503)
        expect(await refused.json()).toMatchObject({ error: 50301 })
        chmodSync(path, 0o644)
        expect((await send('POST', '/plants', { id: 1, name: 'a' })).status).toBe(200)
        expect((await send('PATCH', '/plants/1', { name: 'b' })).status).toBe(200)
        expect((await send('DELETE', '/plants/1')).status).toBe(204)
      } finally {
        await server.stop()
      }
    }, 30_000)
  },
)

// A disk with no room left, as a file-size limit stands for one: a mounted tmpfs needs privileges
// and a shell, the limit neither. SQLite cannot then size the `-shm` file a WAL database is read
// through (32 KiB), which is all that reading needs to write.
describe('a SQLite database on a disk with no room left', () => {
  const runLimited = (args: string[]) => runCliWithFileLimit(16, args)

  it('is still read by export and token list, so that its data can be copied off', async () => {
    const path = join(tempDir(), 'full.db')
    const url = `sqlite:${path}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const db = new Database(path)
    db.prepare(
      "INSERT INTO plants (id, name, name_folded, created_at, updated_at) VALUES (7, 'fern', 'fern', 0, 0)",
    ).run()
    db.close()
    const exported = await runLimited(['export', '--database-url', url])
    expect(exported).toMatchObject({ code: 0, stdout: '{"id":7,"name":"fern"}\n' })
    const listed = await runLimited(['token', 'list', '--json', '--database-url', url])
    expect(listed).toMatchObject({ code: 0, stdout: '[]\n' })
    // A command that writes is still refused, and says which file could not be written.
    expect(await runLimited(['token', 'create', '--name', 'x', '--database-url', url])).toMatchObject({
      code: 1,
      stderr: `plantstore: cannot write to ${path}-shm (disk I/O error): the disk holding the database may have no room left\n`,
    })
  })
})

describe.skipIf(!postgresKind)('a PostgreSQL database that takes no writes', () => {
  it('is refused by serve at start: exit 1 and one line, never a ready server that fails each write', async () => {
    const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const database = new URL(url).pathname.slice(1)
    // What a standby, or a role or database set read-only by its administrator, looks like to a client.
    await admin(url, (c) => c.query(`ALTER DATABASE "${database}" SET default_transaction_read_only = on`))
    const result = await runCli(['serve', '--port', '0', '--database-url', url])
    expect(result.code).toBe(1)
    expect(result.stdout).not.toContain('listening on')
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^plantstore: cannot execute .* in a read-only transaction$/),
    ])
  })
})

describe.skipIf(lacking(existsSync('/proc/self'), 'these paths need Linux /proc'))(
  'a SQLite file in a folder the filesystem refuses to make',
  () => {
    // /proc answers ENOENT to a new folder although its parent exists; Node's recursive mkdir then
    // retried forever, so these commands hung with a core spinning instead of answering.
    it('is refused by migrate at once: exit 1 and one line naming the path', async () => {
      const result = await runCli(['migrate', '--database-url', 'sqlite:/proc/plantstore-none/p.db'])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toEqual([
        'plantstore: cannot open /proc/plantstore-none/p.db (ENOENT: no such file or directory, mkdir ' +
          "'/proc/plantstore-none'): its folder does not exist and cannot be created",
      ])
    })

    it('is refused as a backup target at once: exit 1, and the database is untouched', async () => {
      const url = `sqlite:${join(tempDir(), 'p.db')}`
      expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
      const result = await runCli(['backup', '/proc/plantstore-none/deeper/b.db', '--database-url', url])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(
        'plantstore: cannot write /proc/plantstore-none/deeper/b.db: its folder /proc/plantstore-none cannot be made (ENOENT)\n',
      )
      expect((await runCli(['migrate', '--database-url', url])).stderr).toMatch(/up to date/)
    })
  },
)
