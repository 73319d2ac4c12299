import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { admin, whileLocked } from '../helpers/postgres.js'
import {
  BIN,
  exitCode,
  issueToken,
  ROOT,
  type RunningServer,
  runCli,
  startServer,
} from '../helpers/process.js'
import {
  afterContinue,
  bodyOf,
  continued,
  openSocket,
  rawRequest,
  readUntilClose,
} from '../helpers/raw-http.js'
import { postgresKind, type StoreKind, storedPlantIds, storeKinds, tempDir } from '../helpers/stores.js'

const servers: RunningServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.end()))
})

/**
 * Load shedding is off unless a test sets it: on a machine busy with the rest of the suite, a lag past
 * the limit could shed the very request a test is about (503).
 */
async function start(args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const shedding = args.includes('--max-event-loop-delay') ? [] : ['--max-event-loop-delay', 'off']
  const server = await startServer([...args, ...shedding], env)
  servers.push(server)
  return server
}

async function newDatabase(kind: StoreKind): Promise<{ url: string; token: string }> {
  const url = await kind.freshUrl()
  return { url, token: await issueToken(url, 'process-test') }
}

function create(server: RunningServer, token: string, body: string): Promise<Response> {
  return fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  })
}

describe.each(storeKinds)('the real plantstore serve process on $name', (kind) => {
  it('creates a plant over HTTP, durably (in WAL mode on SQLite)', async () => {
    const db = await newDatabase(kind)
    const server = await start(['--database-url', db.url])
    const res = await create(
      server,
      db.token,
      '{"id": -9223372036854775808, "name": "Aloe", "tag": "succulent"}',
    )
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('{"id":-9223372036854775808,"name":"Aloe","tag":"succulent"}')
    const health = await fetch(`${server.url}/healthz`)
    expect(health.status).toBe(200)
    const ready = await fetch(`${server.url}/readyz`)
    expect(await ready.json()).toEqual({ status: 'ready' })
    expect(await storedPlantIds(db.url)).toEqual(new Set(['-9223372036854775808']))
    if (kind.name === 'sqlite') {
      const reader = new Database(db.url.slice('sqlite:'.length), { readonly: true })
      expect(reader.pragma('journal_mode', { simple: true })).toBe('wal')
      reader.close()
    }
  })

  it('refuses a token from the first request after `token revoke` exits', async () => {
    const db = await newDatabase(kind)
    const server = await start(['--database-url', db.url])
    expect((await create(server, db.token, '{"id": 1, "name": "a"}')).status).toBe(200)
    const revoked = await runCli(['token', 'revoke', db.token.slice(4, 20), '--database-url', db.url])
    expect(revoked.code).toBe(0)
    const refused = async () => {
      const res = await create(server, db.token, '{"id": 2, "name": "b"}')
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
      expect(((await res.json()) as { error: number }).error).toBe(errors.TOKEN_REVOKED.code)
    }
    // SQLite: the very next request. PostgreSQL: within the documented bound (a NOTIFY, normally ms).
    if (kind.name === 'sqlite') await refused()
    else await vi.waitFor(refused, { timeout: 5000, interval: 50 })
  })

  // SIGHUP too: a terminal that closes sends it, and Node's default would end the process on the spot.
  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'finishes a request in flight on %s, then exits 0',
    async (signal) => {
      const db = await newDatabase(kind)
      const server = await start(['--database-url', db.url])
      const body = '{"id": 77, "name": "in flight"}'
      const socket = await openSocket(server.port)
      const answer = readUntilClose(socket, 10_000)
      // A signal that reached the server before it read the headers would find an idle connection.
      const inFlight = continued(socket)
      socket.write(
        `POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${db.token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n` +
          `Expect: 100-continue\r\n\r\n${body.slice(0, 10)}`,
      )
      await inFlight
      server.process.kill(signal)
      // The server has taken the signal and still waits for the create's body.
      await vi.waitFor(() => expect(server.output()).toContain('"shutting down"'), { timeout: 10_000 })
      expect(server.process.exitCode).toBeNull()
      socket.write(body.slice(10))
      const text = afterContinue(await answer)
      expect(text).toMatch(/^HTTP\/1\.1 200/)
      expect(bodyOf(text)).toBe('{"id":77,"name":"in flight"}')
      expect(await server.exited).toBe(0)
      expect(server.output()).toContain('"msg":"stopped"')
      expect((await storedPlantIds(db.url)).has('77')).toBe(true)
    },
  )

  it('loses no acknowledged plant when killed with SIGKILL under load', async () => {
    const db = await newDatabase(kind)
    const server = await start(['--database-url', db.url])
    const acknowledged: number[] = []
    let next = 1000
    let killed = false
    const worker = async () => {
      while (!killed) {
        const id = next++
        try {
          const res = await create(server, db.token, `{"id": ${id}, "name": "p${id}"}`)
          if (res.status === 200) acknowledged.push(id)
        } catch {
          return
        }
      }
    }
    const load = Promise.all(Array.from({ length: 16 }, worker))
    // Killed mid-load once enough creates answered, however slow the machine is today.
    const deadline = Date.now() + 20_000
    while (acknowledged.length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    killed = true
    server.process.kill('SIGKILL')
    await load
    expect(acknowledged.length).toBeGreaterThan(50)

    const restarted = await start(['--database-url', db.url])
    const stored = await storedPlantIds(db.url)
    const lost = acknowledged.filter((id) => !stored.has(String(id)))
    expect(lost).toEqual([])
    const sample = acknowledged[acknowledged.length - 1]
    const read = await fetch(`${restarted.url}/plants/${sample}`, {
      headers: { authorization: `Bearer ${db.token}` },
    })
    expect(read.status).toBe(200)
  })

  it('answers errors raised before routing with exactly the Error shape', async () => {
    const db = await newDatabase(kind)
    const server = await start(['--database-url', db.url])
    const garbage = await rawRequest(server.port, 'GARBAGE\r\n\r\n')
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(bodyOf(garbage))).toEqual({
      error: errors.BAD_REQUEST.code,
      message: expect.any(String),
    })

    const huge = await rawRequest(
      server.port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expect(huge).toMatch(/^HTTP\/1\.1 431 /)
    expect(JSON.parse(bodyOf(huge))).toEqual({
      error: errors.HEADERS_TOO_LARGE.code,
      message: expect.any(String),
    })

    const badLength = await rawRequest(
      server.port,
      'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\nContent-Type: application/json\r\n\r\n{}',
    )
    expect(badLength).toMatch(/^HTTP\/1\.1 400 /)
    expect(Object.keys(JSON.parse(bodyOf(badLength))).sort()).toEqual(['error', 'message'])
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })

  it('answers a client that never finishes its headers with 408 once --headers-timeout passes', async () => {
    const db = await newDatabase(kind)
    const server = await start([
      '--database-url',
      db.url,
      '--headers-timeout',
      '1s',
      '--request-timeout',
      '2s',
    ])
    const socket = await openSocket(server.port)
    const answer = readUntilClose(socket, 8000)
    socket.write('POST /plants HTTP/1.1\r\nHost: localhost\r\n')
    const text = await answer
    expect(text).toMatch(/^HTTP\/1\.1 408 /)
    expect(JSON.parse(bodyOf(text))).toEqual({
      error: errors.REQUEST_TIMEOUT.code,
      message: expect.any(String),
    })
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })

  it('never writes a token to its log, even at trace level', async () => {
    const db = await newDatabase(kind)
    const server = await start(['--database-url', db.url, '--log-level', 'trace'])
    const bogus = `pst_0123456789abcdef_${'Z'.repeat(43)}`
    await create(server, db.token, '{"id": 5, "name": "logged"}')
    await create(server, bogus, '{"id": 6, "name": "refused"}')
    await fetch(`${server.url}/plants/5`, {
      headers: { authorization: `Bearer ${db.token}`, 'x-request-id': 'trace-me' },
    })
    await new Promise((r) => setTimeout(r, 200))
    const log = server.output()
    expect(log).toContain('trace-me')
    expect(log).toContain('request completed')
    expect(log).not.toContain(db.token.slice(21))
    expect(log).not.toContain('Z'.repeat(43))
    expect(log).not.toMatch(/bearer\s+pst_/i)
  })

  it('--bootstrap-token-file creates a full-scope token for an empty store, mode 0600', async () => {
    const file = join(tempDir(), 'token')
    const url = kind.name === 'sqlite' ? 'sqlite::memory:' : await kind.freshUrl()
    const server = await start(['--database-url', url, '--bootstrap-token-file', file])
    const { readFileSync, statSync } = await import('node:fs')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const token = readFileSync(file, 'utf8').trim()
    const res = await create(server, token, '{"id": 1, "name": "boot"}')
    expect(res.status).toBe(200)
    expect(server.output()).not.toContain(token.slice(21))
  })

  it('exits 1 by itself when its port is taken', async () => {
    const { createServer } = await import('node:net')
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = String((taken.address() as { port: number }).port)
    try {
      const started = Date.now()
      const failed = await runCli([
        'serve',
        '--host',
        '127.0.0.1',
        '--port',
        port,
        '--database-url',
        await kind.freshUrl(),
      ])
      // Kept alive by what it opened for serving, it would run until runCli's own timeout kills it.
      expect(Date.now() - started).toBeLessThan(20_000)
      expect(failed.code).toBe(1)
      expect(failed.stderr).toMatch(new RegExp(`^plantstore: --port ${port}: listen EADDRINUSE`))
    } finally {
      taken.close()
    }
  })

  it('--bootstrap-token-file that cannot be written leaves no token, so a later start bootstraps', async () => {
    const url = await kind.freshUrl()
    const dir = tempDir()
    const failed = await runCli([
      'serve',
      '--port',
      '0',
      '--database-url',
      url,
      '--bootstrap-token-file',
      join(dir, 'missing', 'token'),
    ])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('its folder does not exist')
    const listed = await runCli(['token', 'list', '--json', '--database-url', url])
    expect(JSON.parse(listed.stdout)).toEqual([])

    const file = join(dir, 'token')
    const server = await start(['--database-url', url, '--bootstrap-token-file', file])
    const { readFileSync } = await import('node:fs')
    const token = readFileSync(file, 'utf8').trim()
    expect((await create(server, token, '{"id": 1, "name": "boot"}')).status).toBe(200)
  })
})

describe('a serve process with the longest timeouts', () => {
  // Node's own request timeout is 5m: the server must be made with the ones configured, whose
  // longest (a timer's limit) must not end the start (test/settings.test.ts checks them in process).
  it('serves with a request and headers timeout of 24 days', async () => {
    const server = await start([
      '--database-url',
      'sqlite::memory:',
      '--request-timeout',
      '24d',
      '--headers-timeout',
      '24d',
    ])
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    expect(await server.stop()).toBe(0)
  })
})

describe('a serve process with rate limits', () => {
  it('serves with each rate limit as set: --rate-limit per token, --unauthenticated-rate-limit per address', async () => {
    const dir = tempDir()
    const server = await startServer([
      '--database-url',
      `sqlite:${join(dir, 'p.db')}`,
      '--bootstrap-token-file',
      join(dir, 'token'),
      '--rate-limit',
      '2/1m',
      '--unauthenticated-rate-limit',
      '1/1m',
    ])
    try {
      const token = readFileSync(join(dir, 'token'), 'utf8').trim()
      const get = (authorization?: string) =>
        fetch(`${server.url}/plants/1`, authorization ? { headers: { authorization } } : {})
      const held = []
      for (let i = 0; i < 3; i++) held.push((await get(`Bearer ${token}`)).status)
      expect(held).toEqual([404, 404, 429])
      expect([(await get()).status, (await get()).status]).toEqual([401, 429])
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})

describe('a serve process on a database of an older schema', () => {
  it('logs the migrations it applied at start, and none on the next start', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const first = await start(['--database-url', databaseUrl])
    const migrated = first
      .output()
      .split('\n')
      .filter((line) => line.includes('"schema migrated"'))
      .map((line) => JSON.parse(line) as { migrations: string[] })
    expect(migrated).toHaveLength(1)
    expect(migrated[0]?.migrations[0]).toBe('001_init')
    expect(await first.stop()).toBe(0)
    const second = await start(['--database-url', databaseUrl])
    expect(second.output()).toContain('listening on')
    expect(second.output()).not.toContain('schema migrated')
  })
})

describe("a serve process's Node settings", () => {
  // The launcher runs Node with its own defaults: a flag tuned for one machine size would cost
  // another (docs/performance.md shows small-machine tuning as NODE_OPTIONS instead).
  const expectNodeDefaults = (pid: number) => {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    const launcher = argv.findIndex((arg) => arg.endsWith('bin/plantstore'))
    expect(launcher).toBe(1)
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
    if (!('MALLOC_ARENA_MAX' in process.env))
      expect(env.some((v) => v.startsWith('MALLOC_ARENA_MAX='))).toBe(false)
  }

  it('holds for the process npm start runs and for each of its workers', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const server = await start(['--database-url', databaseUrl, '--workers', '2'])
    const pid = server.process.pid as number
    expectNodeDefaults(pid)
    const workers = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number)
    expect(workers).toHaveLength(2)
    for (const worker of workers) expectNodeDefaults(worker)
    expect(await server.stop()).toBe(0)
  })
})

describe('a serve process at a log level above info', () => {
  it('still writes the one line that tells its address, and nothing else of its start', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    for (const workers of ['1', '2']) {
      // startServer waits for the address line: without it, this start would time out.
      const server = await start(['--database-url', databaseUrl, '--log-level', 'warn', '--workers', workers])
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      const lines = server.output().trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 30, msg: `listening on ${server.url}` })
      expect(await server.stop()).toBe(0)
    }
  })

  it('writes nothing at all when silent', async () => {
    // A port of its own, since a silent server tells none: taken and released just before.
    const probe = createServer().listen(0, '127.0.0.1')
    await once(probe, 'listening')
    const { port } = probe.address() as AddressInfo
    await new Promise((resolve) => probe.close(resolve))
    const args = [
      'serve',
      '--port',
      String(port),
      '--database-url',
      'sqlite::memory:',
      '--log-level',
      'silent',
    ]
    const child = spawn(BIN, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
    })
    const exited = exitCode(child)
    await vi.waitFor(async () => expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200), {
      timeout: 20_000,
      interval: 100,
    })
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(out).toBe('')
  })
})

describe('a serve process whose log reader goes away', () => {
  it('goes on serving, says so once on stderr, and still stops cleanly on SIGTERM', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const token = (
      await runCli(['token', 'create', '--name', 'log', '--database-url', databaseUrl])
    ).stdout.trim()
    const server = await start(['--database-url', databaseUrl])
    // The log's pipe closes: every later line (the shutdown's first) meets EPIPE.
    server.process.stdout?.destroy()
    expect((await create(server, token, '{"id": 1, "name": "after"}')).status).toBe(200)
    server.process.kill('SIGTERM')
    expect(await server.exited).toBe(0)
    expect(server.output().match(/the log \(standard output\) cannot be written/g)).toHaveLength(1)
    expect(server.output()).not.toMatch(/Unhandled|at afterWriteDispatched/)
  })
})

/** A serve process whose output is collected; killed after the test if still running. */
function spawnServe(args: string[]) {
  const child = spawn(BIN, ['serve', '--port', '0', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (code, signal) => resolve([code, signal])),
  )
  /** Sends SIGTERM and gives the process 5 s to exit: its exit code and signal, or 'still running'. */
  const terminate = async () => {
    child.kill('SIGTERM')
    return Promise.race([exited, sleep(5000).then(() => 'still running' as const)])
  }
  return { child, output: () => output, terminate }
}

// Each waits for a process to reach a state of its start; on a busy machine a start takes seconds.
describe('a serve process stopped before it serves', () => {
  it.each([
    ['one process', []],
    ['--workers 2', ['--workers', '2']],
  ])(
    'exits 0 at once on SIGTERM while its database is unreachable, instead of dying by the signal (%s)',
    async (_, extra) => {
      // Nothing listens on port 1: every attempt is refused, and the start goes on retrying.
      const serve = spawnServe([
        '--database-url',
        'postgres://plantstore:secret@127.0.0.1:1/plantstore',
        '--database-startup-timeout',
        '60s',
        ...extra,
      ])
      try {
        await vi.waitFor(() => expect(serve.output()).toContain('database unreachable; retrying'), {
          timeout: 20_000,
        })
        expect(await serve.terminate()).toEqual([0, null])
        expect(serve.output()).toMatch(/stopped while starting, before serving anything/)
        expect(serve.output()).not.toContain('secret')
      } finally {
        serve.child.kill('SIGKILL')
      }
    },
    60_000,
  )

  it.skipIf(!postgresKind)(
    'exits 0 at once on SIGTERM while it waits for another instance to bootstrap its token',
    async () => {
      const url = await (postgresKind as NonNullable<typeof postgresKind>).freshUrl()
      expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
      const database = new URL(url).pathname.slice(1)
      // Another instance's bootstrap holds the tokens table; this one has its database and waits.
      await whileLocked(url, 'tokens', async () => {
        const serve = spawnServe(['--database-url', url, '--bootstrap-token-file', join(tempDir(), 'token')])
        try {
          await vi.waitFor(
            async () => {
              const waiting = await admin(url, (c) =>
                c.query(
                  "SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE tokens%'",
                  [database],
                ),
              )
              expect(waiting.rowCount).toBe(1)
            },
            { timeout: 20_000 },
          )
          expect(await serve.terminate()).toEqual([0, null])
          expect(serve.output()).toMatch(/stopped while starting, before serving anything/)
        } finally {
          serve.child.kill('SIGKILL')
        }
      })
    },
    60_000,
  )
})

describe('serve --bootstrap-token-file', () => {
  it('leaves the file mode 0600 even when it already existed with a wider mode', async () => {
    const { chmodSync, readFileSync, statSync, writeFileSync } = await import('node:fs')
    const dir = tempDir()
    const file = join(dir, 'token')
    writeFileSync(file, 'left from an earlier start\n')
    chmodSync(file, 0o644)
    const server = await start(['--database-url', 'sqlite::memory:', '--bootstrap-token-file', file])
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const token = readFileSync(file, 'utf8').trim()
    expect(token).toMatch(/^pst_/)
    expect((await create(server, token, '{"id": 1, "name": "boot"}')).status).toBe(200)
    expect(readdirSync(dir)).toEqual(['token'])
  })

  it('is refused naming the setting and the file when it cannot be written, and leaves nothing behind', async () => {
    const dir = tempDir()
    const cases: Array<[string, string]> = [
      [join(dir, 'missing', 'token'), 'its folder does not exist'],
      [dir, 'it is a folder; name a file in it'],
    ]
    for (const [file, why] of cases) {
      const result = await runCli([
        'serve',
        '--port',
        '0',
        '--database-url',
        'sqlite::memory:',
        '--bootstrap-token-file',
        file,
      ])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(`plantstore: cannot write --bootstrap-token-file ${file}: ${why}\n`)
    }
    expect(readdirSync(dir)).toEqual([])
  })
})

describe('a SQLite database file moved away while the server has it open', () => {
  it('refuses writes with 503 instead of acknowledging them into a file nobody will read, until it is back', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    const { url, token } = await newDatabase({ name: 'sqlite', freshUrl: async () => `sqlite:${path}` })
    const server = await start(['--database-url', url])
    const create = (id: number) =>
      fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}` }),
      })
    expect((await create(1)).status).toBe(200)
    const suffixes = ['', '-wal', '-shm']
    for (const suffix of suffixes) renameSync(`${path}${suffix}`, join(dir, `moved.db${suffix}`))
    try {
      const refused = await create(2)
      expect(refused.status).toBe(503)
      expect(refused.headers.get('retry-after')).toBe('1')
      expect(((await refused.json()) as { error: number }).error).toBe(errors.UNAVAILABLE.code)
      const changed = await fetch(`${server.url}/plants/1`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"name": "renamed"}',
      })
      expect(changed.status).toBe(503)
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    } finally {
      for (const suffix of suffixes) renameSync(join(dir, `moved.db${suffix}`), `${path}${suffix}`)
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    expect((await create(3)).status).toBe(200)
    expect(await server.stop()).toBe(0)
    expect(await storedPlantIds(url)).toEqual(new Set(['1', '3']))
  })
})

describe('a SQLite database file replaced or moved while the server has it open, its log left at the path', () => {
  /** A server whose acknowledged creates 1 and 2 are still only in the log (no periodic checkpoint). */
  async function serveWithCreatesInTheLog(path: string) {
    const { url, token } = await newDatabase({ name: 'sqlite', freshUrl: async () => `sqlite:${path}` })
    const server = await start(['--database-url', url, '--wal-checkpoint-interval', 'off'])
    for (const id of [1, 2])
      expect((await create(server, token, `{"id": ${id}, "name": "acknowledged"}`)).status).toBe(200)
    return { url, token, server }
  }

  it('leaves the file put in its place as it was: the stop does not hand it the old log', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    const { url, token, server } = await serveWithCreatesInTheLog(path)
    // The replacement, complete in itself (no log beside it), holds plant 100 alone.
    const replacement = join(dir, 'replacement.db')
    await newDatabase({ name: 'sqlite', freshUrl: async () => `sqlite:${replacement}` })
    const other = new Database(replacement)
    other.exec(
      "INSERT INTO plants (id, name, name_folded, version, created_at, updated_at) VALUES (100, 'restored', 'restored', 1, 0, 0)",
    )
    other.close()
    renameSync(replacement, path)
    expect((await create(server, token, '{"id": 4, "name": "after"}')).status).toBe(503)
    expect(await server.stop()).toBe(0)
    expect(await storedPlantIds(url)).toEqual(new Set(['100']))
  })

  it('keeps in the moved file every create acknowledged before it moved', async () => {
    const dir = tempDir()
    const path = join(dir, 'p.db')
    const { server } = await serveWithCreatesInTheLog(path)
    const moved = join(dir, 'moved.db')
    renameSync(path, moved)
    expect(await server.stop()).toBe(0)
    expect(await storedPlantIds(`sqlite:${moved}`)).toEqual(new Set(['1', '2']))
  })
})

describe('a SQLite write-ahead log deleted while the server has it open', () => {
  it('refuses writes with 503 instead of acknowledging them into a log a crash would lose; a restart keeps all', async () => {
    const path = join(tempDir(), 'p.db')
    const { url, token } = await newDatabase({ name: 'sqlite', freshUrl: async () => `sqlite:${path}` })
    // No periodic checkpoint: it would copy the deleted log back before the crash below.
    const server = await start(['--database-url', url, '--wal-checkpoint-interval', 'off'])
    expect((await create(server, token, '{"id": 1, "name": "before"}')).status).toBe(200)
    rmSync(`${path}-wal`)
    const refused = await create(server, token, '{"id": 2, "name": "after"}')
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(((await refused.json()) as { error: number }).error).toBe(errors.UNAVAILABLE.code)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
    // A clean stop copies what the deleted log holds into the database.
    expect(await server.stop()).toBe(0)
    expect(await storedPlantIds(url)).toEqual(new Set(['1']))
    const restarted = await start(['--database-url', url])
    expect((await create(restarted, token, '{"id": 2, "name": "after"}')).status).toBe(200)
    expect(await restarted.stop()).toBe(0)
    expect(await storedPlantIds(url)).toEqual(new Set(['1', '2']))
  })
})
