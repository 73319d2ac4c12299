import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { admin, TEST_DATABASE_URL } from '../helpers/postgres.js'
import { BIN, exitCode, ROOT, runCli } from '../helpers/process.js'
import { lacking } from '../helpers/requirement.js'
import { postgresKind, storeKinds, tempDir } from '../helpers/stores.js'

const TOKEN_SHAPE = /^pst_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/

describe.each(storeKinds)('plantstore token on $name', (kind) => {
  it('token create on a new database prints exactly one line: the token', async () => {
    const url = await kind.freshUrl()
    const res = await runCli(['token', 'create', '--name', 'first', '--database-url', url])
    expect(res.code).toBe(0)
    const lines = res.stdout.split('\n').filter((l) => l !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(TOKEN_SHAPE)
  })

  it('token create revokes the token it could not print, and exits 1', async () => {
    const url = await kind.freshUrl()
    // A reader gone before the line is written (EPIPE), and a full device (ENOSPC).
    const gone = spawn(BIN, ['token', 'create', '--name', 'lost', '--database-url', url], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    gone.stdout.destroy()
    let goneErr = ''
    gone.stderr.on('data', (chunk: Buffer) => {
      goneErr += chunk
    })
    const full = openSync('/dev/full', 'w')
    const toFull = spawn(BIN, ['token', 'create', '--name', 'full', '--database-url', url], {
      cwd: ROOT,
      stdio: ['ignore', full, 'pipe'],
    })
    closeSync(full)
    let fullErr = ''
    toFull.stderr?.on('data', (chunk: Buffer) => {
      fullErr += chunk
    })
    expect(await Promise.all([exitCode(gone), exitCode(toFull)])).toEqual([1, 1])
    const revoked =
      /^plantstore: cannot write the token to standard output \((EPIPE|ENOSPC)\); token ([0-9a-f]{16}) was revoked, issue another\n$/
    // Matched whole, so that a failure shows what each command said.
    expect([goneErr, fullErr]).toEqual([expect.stringMatching(revoked), expect.stringMatching(revoked)])
    expect([goneErr.match(revoked)?.[1], fullErr.match(revoked)?.[1]]).toEqual(['EPIPE', 'ENOSPC'])
    const listed = JSON.parse((await runCli(['token', 'list', '--json', '--database-url', url])).stdout) as {
      name: string
      status: string
    }[]
    expect(listed.map(({ name, status }) => [name, status]).sort()).toEqual([
      ['full', 'revoked'],
      ['lost', 'revoked'],
    ])
  })

  it('refuses a database a newer release migrated, and leaves it as it was', async () => {
    const url = await kind.freshUrl()
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    // PostgreSQL fills applied_at itself.
    await onDatabase(
      url,
      kind.name === 'sqlite'
        ? "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '999_future', 0)"
        : "INSERT INTO schema_migrations (version, name) VALUES (999, '999_future')",
    )
    for (const command of [['migrate'], ['token', 'list'], ['serve', '--port', '0']]) {
      const res = await runCli([...command, '--database-url', url])
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(
        /^plantstore: the database has schema version 999, which this plantstore does not know .*\n$/,
      )
    }
    expect(await onDatabase(url, 'SELECT max(version) AS v FROM schema_migrations')).toEqual([{ v: 999 }])
  })

  it('undoes every migration of a run when one fails, and names it', async () => {
    const url = await kind.freshUrl()
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    // A database at version 8 whose webhooks table has 010's column already: 009 applies, 010 fails.
    await onDatabase(url, 'DELETE FROM schema_migrations WHERE version >= 9')
    await onDatabase(url, 'DROP INDEX plants_tag_id')
    await onDatabase(url, 'CREATE INDEX plants_tag_id ON plants (tag, id)')
    const tagIndex = () =>
      onDatabase(
        url,
        kind.name === 'sqlite'
          ? "SELECT sql AS d FROM sqlite_schema WHERE name = 'plants_tag_id'"
          : "SELECT indexdef AS d FROM pg_indexes WHERE indexname = 'plants_tag_id'",
      )
    const before = await tagIndex()
    for (const command of [['migrate'], ['serve', '--port', '0']]) {
      const res = await runCli([...command, '--database-url', url])
      expect(res.code).toBe(1)
      expect(res.stderr).toMatch(
        /^plantstore: cannot apply migration 010_webhook_last_failure \(.*last_failure_at.*\): the database was left as it was, at schema version 8\n$/,
      )
    }
    expect(await tagIndex()).toEqual(before)
    expect(await onDatabase(url, 'SELECT max(version) AS v FROM schema_migrations')).toEqual([{ v: 8 }])
  })
})

/** Runs one statement straight on the database a URL names; the rows it returns. */
async function onDatabase(url: string, sql: string): Promise<unknown[]> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length))
    try {
      const statement = db.prepare(sql)
      if (statement.reader) return statement.all()
      statement.run()
      return []
    } finally {
      db.close()
    }
  }
  return admin(url, async (client) => (await client.query(sql)).rows)
}

describe('plantstore usage errors', () => {
  const dbUrl = () => `sqlite:${join(tempDir(), 'p.db')}`

  // The table of usage errors runs in this process (test/cli/usage.test.ts); these go through the
  // real binary, whose exit code and stderr are what a shell sees.
  it.each([
    [['serve', '--port', '70000'], /--port \(PORT\)/],
    [['frobnicate'], /unknown command/],
  ])('exits 2 with one line on stderr for %j', async (args, message) => {
    const needsDb = args[0] !== 'frobnicate'
    const res = await runCli([...args, ...(needsDb ? ['--database-url', dbUrl()] : [])])
    expect(res.code).toBe(2)
    const lines = res.stderr.split('\n').filter((l) => l.trim() !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(message)
    expect(res.stderr).not.toMatch(/\bat .+:\d+:\d+/)
  })

  it('--version prints the version as the one line on stdout and exits 0', async () => {
    const res = await runCli(['--version'])
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(res).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  it('reads settings from the environment, and a bad env value names the variable', async () => {
    const res = await runCli(['serve'], { PORT: 'eighty', DATABASE_URL: dbUrl() })
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/PORT/)
  })

  it('exits 0 without a stack when the reader of its output stops early (token list | head -1)', async () => {
    const url = dbUrl()
    for (const name of ['a', 'b']) await runCli(['token', 'create', '--name', name, '--database-url', url])
    for (const args of [['token', 'list'], ['token', 'list', '--json'], ['export']]) {
      const child = spawn(BIN, [...args, '--database-url', url], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      // The reader is gone before the command writes its first line.
      child.stdout.destroy()
      let stderr = ''
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk
      })
      const code = await exitCode(child)
      expect(stderr).not.toMatch(/EPIPE|\bat .+:\d+:\d+/)
      expect(code).toBe(0)
    }
  })

  it.skipIf(lacking(existsSync('/dev/full'), 'there is no /dev/full'))(
    'exits 1 with one line when its output cannot be written (export > a full disk)',
    async () => {
      const url = dbUrl()
      const file = join(tempDir(), 'p.jsonl')
      writeFileSync(file, '{"id":1,"name":"a"}\n')
      expect((await runCli(['import', file, '--database-url', url])).code).toBe(0)
      for (const args of [['export'], ['token', 'list']]) {
        const full = openSync('/dev/full', 'w')
        const child = spawn(BIN, [...args, '--database-url', url], {
          cwd: ROOT,
          stdio: ['ignore', full, 'pipe'],
        })
        closeSync(full)
        let stderr = ''
        child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk
        })
        // 'close', not 'exit': the line on stderr may still be in the pipe when the process exits.
        const [code] = await once(child, 'close')
        expect(code).toBe(1)
        expect(stderr).toMatch(/^plantstore: cannot write to standard output: .*ENOSPC.*\n$/)
        expect(stderr).not.toMatch(/\bat .+:\d+:\d+/)
      }
    },
  )

  it('creates the database folder for a new sqlite path', async () => {
    const dir = join(tempDir(), 'nested', 'deeper')
    const res = await runCli(['migrate', '--database-url', `sqlite:${join(dir, 'p.db')}`])
    expect(res.code).toBe(0)
    expect(statSync(join(dir, 'p.db')).isFile()).toBe(true)
  })

  it('makes a new database readable by its owner alone where a symbolic link given as its path leads', async () => {
    const dir = tempDir()
    const link = join(dir, 'p.db')
    symlinkSync(join(dir, 'volume.db'), link)
    const res = await runCli(['migrate', '--database-url', `sqlite:${link}`])
    expect(res.code).toBe(0)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(statSync(join(dir, 'volume.db')).mode & 0o777).toBe(0o600)
  })

  it('makes the folders it creates for a database or a backup private to its owner, whatever the umask', async () => {
    const dir = tempDir()
    const db = join(dir, 'data', 'store', 'p.db')
    const copy = join(dir, 'backups', 'daily', 'b.db')
    const underOpenUmask = (args: string[]) =>
      new Promise<number>((resolve) => {
        execFile('sh', ['-c', 'umask 000 && exec "$@"', 'sh', BIN, ...args], { cwd: ROOT }, (error) =>
          resolve(error ? Number(error.code) : 0),
        )
      })
    expect(await underOpenUmask(['migrate', '--database-url', `sqlite:${db}`])).toBe(0)
    expect(await underOpenUmask(['backup', copy, '--database-url', `sqlite:${db}`])).toBe(0)
    // A folder others may write to would let them replace the database, its log, or a backup.
    const modes = ['data', 'data/store', 'backups', 'backups/daily'].map(
      (folder) => statSync(join(dir, folder)).mode & 0o777,
    )
    expect(modes).toEqual([0o700, 0o700, 0o700, 0o700])
  })

  it('refuses a sqlite path that is a folder, naming it', async () => {
    const dir = tempDir()
    const res = await runCli(['migrate', '--database-url', `sqlite:${dir}`])
    expect(res.code).toBe(1)
    expect(res.stderr).toBe(
      `plantstore: cannot open ${dir} (unable to open database file): it must be a file (or the name of a new one) that this user may read and write, in a folder it may enter\n`,
    )
  })

  it('refuses a sqlite path that ends in a slash, and creates nothing for it', async () => {
    const dir = tempDir()
    for (const given of [join(dir, 'store/'), join(dir, 'new', 'store/')]) {
      const res = await runCli(['migrate', '--database-url', `sqlite:${given}`])
      expect(res.code).toBe(1)
      expect(res.stderr).toBe(
        `plantstore: cannot open ${given}: it names a folder; name the database file in it, such as ${given}plantstore.db\n`,
      )
    }
    expect(readdirSync(dir)).toEqual([])
  })

  it('names the path when the folder it needs cannot be made (a file where a folder should be)', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'notes'), 'a file, not a folder\n')
    const given = join(dir, 'notes', 'store.db')
    const res = await runCli(['migrate', '--database-url', `sqlite:${given}`])
    expect(res.code).toBe(1)
    // Node says EEXIST or ENOTDIR, depending on where in the path the file is.
    expect(res.stderr).toBe(
      `plantstore: cannot open ${given} (EEXIST: file already exists, mkdir '${join(dir, 'notes')}'): its folder does not exist and cannot be created\n`,
    )
    const deeper = join(dir, 'notes', 'sub', 'store.db')
    expect((await runCli(['migrate', '--database-url', `sqlite:${deeper}`])).stderr).toMatch(
      /^plantstore: cannot open \S+ \(ENOTDIR: not a directory, mkdir .*\): its folder does not exist and cannot be created\n$/,
    )
  })

  it('refuses a file that is not a plantstore database, naming it, and leaves it as it was', async () => {
    const dir = tempDir()
    const foreign = join(dir, 'other-app.db')
    const other = new Database(foreign)
    other.exec(
      'CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 0)',
    )
    other.close()
    const text = join(dir, 'notes.db')
    writeFileSync(text, 'not a database, just some words long enough to fill a SQLite header.\n'.repeat(4))
    for (const [file, said] of [
      [foreign, 'is a SQLite database of another application (tables customers), not a plantstore one'],
      [text, 'is not a SQLite database'],
    ] as const) {
      const before = readFileSync(file)
      const res = await runCli(['migrate', '--database-url', `sqlite:${file}`])
      expect(res.code).toBe(1)
      expect(res.stderr.startsWith(`plantstore: ${file} ${said}`), res.stderr).toBe(true)
      expect(res.stderr).toMatch(/: it was left as it was\n$/)
      expect(readFileSync(file).equals(before)).toBe(true)
      expect(existsSync(`${file}-wal`)).toBe(false)
    }
  })

  it('refuses a damaged database file, naming it and the way back', async () => {
    const dir = tempDir()
    const file = join(dir, 'cut.db')
    expect((await runCli(['migrate', '--database-url', `sqlite:${file}`])).code).toBe(0)
    const whole = readFileSync(file)
    // Cut short, as a copy that stopped midway: the schema's pages are there, the tables' are not.
    writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 3)))
    for (const command of [['migrate'], ['export'], ['serve', '--port', '0']]) {
      const res = await runCli([...command, '--database-url', `sqlite:${file}`])
      expect(res.code, command.join(' ')).toBe(1)
      expect(res.stderr).toBe(
        `plantstore: ${file} is damaged (database disk image is malformed): restore a backup of it (see Backup and restore)\n`,
      )
    }
  })

  it('refuses a backup copy a newer release made, and leaves its bytes as they were', async () => {
    const dir = tempDir()
    const live = join(dir, 'live.db')
    expect((await runCli(['migrate', '--database-url', `sqlite:${live}`])).code).toBe(0)
    // A backup is in rollback-journal mode (VACUUM INTO), which switching it to WAL would rewrite.
    const copy = join(dir, 'copy.db')
    expect((await runCli(['backup', copy, '--database-url', `sqlite:${live}`])).code).toBe(0)
    await onDatabase(
      `sqlite:${copy}`,
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, '999_future', 0)",
    )
    const before = readFileSync(copy)
    for (const command of [
      ['migrate'],
      ['serve', '--port', '0'],
      ['token', 'create', '--name', 'x'],
      ['export'],
    ]) {
      const res = await runCli([...command, '--database-url', `sqlite:${copy}`])
      expect(res.code, command.join(' ')).toBe(1)
      expect(res.stderr).toMatch(
        /^plantstore: the database has schema version 999, which this plantstore does not know/,
      )
      expect(readFileSync(copy).equals(before), command.join(' ')).toBe(true)
      expect(existsSync(`${copy}-wal`)).toBe(false)
    }
  })
})

describe.skipIf(!TEST_DATABASE_URL)('a PostgreSQL server that refuses the connection', () => {
  const spoiled = (change: (url: URL) => void) => {
    const url = new URL(TEST_DATABASE_URL as string)
    change(url)
    return url
  }
  it.each([
    [
      'a wrong password',
      () =>
        spoiled((url) => {
          url.password = 'not-the-password'
        }),
    ],
    [
      'a database that does not exist',
      () =>
        spoiled((url) => {
          url.pathname = '/plantstore_nosuch_db'
        }),
    ],
  ])(
    'names the server and the database, not the password, and exits 1 at once for %s',
    async (_what, given) => {
      const url = given()
      const database = decodeURIComponent(url.pathname.slice(1))
      for (const command of [
        ['token', 'list'],
        ['serve', '--port', '0'],
      ]) {
        const started = Date.now()
        const res = await runCli([...command, '--database-url', url.toString()])
        expect(res.code).toBe(1)
        expect(res.stderr).toContain(
          `plantstore: PostgreSQL at ${url.host}, database ${JSON.stringify(database)} refused the connection: `,
        )
        expect(res.stderr).not.toContain('not-the-password')
        // Refused for good: not retried for --database-startup-timeout as an outage would be.
        expect(Date.now() - started).toBeLessThan(10_000)
      }
    },
  )

  it("says what to do when the URL's search path names no schema that exists, and exits 1 at once", async () => {
    const url = new URL(await (postgresKind as NonNullable<typeof postgresKind>).freshUrl())
    url.searchParams.set('options', '-c search_path=greenhouse')
    for (const command of [['migrate'], ['token', 'list'], ['serve', '--port', '0']]) {
      const started = Date.now()
      const res = await runCli([...command, '--database-url', url.toString()])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(
        `plantstore: PostgreSQL at ${url.host}, database ${JSON.stringify(url.pathname.slice(1))} has no schema for the tables: `,
      )
      expect(res.stderr).toContain("the schema the URL's search_path names must be created first")
      expect(Date.now() - started).toBeLessThan(10_000)
    }
    await admin(url.toString(), (c) => c.query('CREATE SCHEMA greenhouse'))
    const res = await runCli(['migrate', '--database-url', url.toString()])
    expect(res.code).toBe(0)
    const tables = await admin(url.toString(), (c) =>
      c.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'greenhouse' AND tablename = 'plants'",
      ),
    )
    expect(tables.rows[0]).toEqual({ n: 1 })
  })
})
