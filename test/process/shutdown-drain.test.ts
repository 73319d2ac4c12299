import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { errorOf } from '../helpers/app.js'
import { logEntries } from '../helpers/log.js'
import { whileLocked } from '../helpers/postgres.js'
import { issueToken, startServer } from '../helpers/process.js'
import { afterContinue, continued, openSocket, parseResponses, readUntilClose } from '../helpers/raw-http.js'
import { storeKinds, tempDir } from '../helpers/stores.js'

describe.each(storeKinds)('shutdown behind a load balancer on $name', (kind) => {
  it('answers /readyz 503 from the moment SIGTERM arrives, serves through --drain-delay, then exits 0', async () => {
    const url = await kind.freshUrl()
    const token = await issueToken(url, 'drain')
    const server = await startServer([
      '--database-url',
      url,
      '--drain-delay',
      '3s',
      '--shutdown-timeout',
      '10s',
    ])
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      server.process.kill('SIGTERM')
      // From its log line on, the server has taken the signal: a server slow to get to it would still
      // answer a request that came first as ready.
      await vi.waitFor(() => expect(server.output()).toContain('"shutting down"'), { timeout: 10_000 })
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(503)
      expect(ready.headers.get('retry-after')).toBe('1')
      expect(((await ready.json()) as { error: number }).error).toBe(50301)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
      // Requests the load balancer still sends during the delay are served normally.
      const created = await fetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"id": 1, "name": "late"}',
      })
      expect(created.status).toBe(200)
      const [code] = await once(server.process, 'exit')
      expect(code).toBe(0)
    } finally {
      await server.stop()
    }
  })
})

/**
 * Starts a server and, on one connection, sends half of a create's body, then (once the server has the
 * create in flight) SIGTERM, then (once the port is closed) what `rest` gives: the rest of the body and
 * whatever follows it. Resolves with the answers read until the server closed the connection (or
 * `readMs` passed) and whether it exited 0.
 */
async function createInFlightAtShutdown(
  serveArgs: string[],
  readMs: number,
  rest: (auth: string) => string,
): Promise<{
  responses: ReturnType<typeof parseResponses>
  exitCode: number | null
  output: string
  database: string
}> {
  const dir = tempDir()
  const server = await startServer([
    '--database-url',
    `sqlite:${join(dir, 'p.db')}`,
    '--bootstrap-token-file',
    join(dir, 'token'),
    ...serveArgs,
  ])
  try {
    const auth = `Authorization: Bearer ${readFileSync(join(dir, 'token'), 'utf8').trim()}`
    const socket = await openSocket(server.port)
    const answers = readUntilClose(socket, readMs)
    // A signal that reached the server before it read the headers would find an idle connection.
    const inFlight = continued(socket)
    socket.write(
      `POST /plants HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/json\r\nContent-Length: 25\r\nExpect: 100-continue\r\n\r\n{"id": 8,`,
    )
    await inFlight
    server.process.kill('SIGTERM')
    // Without --drain-delay the port closes as the shutdown begins; a server slow to take the signal
    // would otherwise read the rest first and answer it as if nothing had happened.
    await vi.waitFor(
      async () => {
        const refused = await openSocket(server.port).then(
          (probe) => probe.destroy(),
          () => 'refused',
        )
        expect(refused).toBe('refused')
      },
      { timeout: 10_000, interval: 20 },
    )
    socket.write(rest(auth))
    const responses = parseResponses(afterContinue(await answers))
    return { responses, exitCode: await server.exited, output: server.output(), database: join(dir, 'p.db') }
  } finally {
    await server.stop()
  }
}

describe('a request that arrives on an open connection once shutdown has begun', () => {
  it('finishes the request in flight and answers the next with 503 in the Error shape', async () => {
    // A create in flight (its body half sent) holds the connection open through the shutdown.
    const { responses, exitCode } = await createInFlightAtShutdown(
      [],
      10_000,
      (auth) => ` "name": "late"}GET /plants/8 HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`,
    )
    expect(responses.map((r) => r.status)).toEqual([200, 503])
    const refused = responses[1] as (typeof responses)[number]
    expect(errorOf(refused).error).toBe(errors.UNAVAILABLE.code)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers.connection).toBe('close')
    expect(refused.headers['x-request-id']).toEqual(expect.any(String))
    expect(exitCode).toBe(0)
  })
})

describe('a request in flight when shutdown begins, on a connection the client would keep open', () => {
  it('has its connection closed after the answer, so the idle connection does not hold the exit up', async () => {
    const { responses, exitCode } = await createInFlightAtShutdown(
      // Longer than the shutdown may take: kept alive, the connection would outlast it.
      ['--keep-alive-timeout', '60s', '--shutdown-timeout', '8s'],
      6_000,
      // The rest of the body, and nothing after it: the client would keep the connection for later.
      () => ' "name": "late"}',
    )
    // The connection closed well before the client's read gave up, and before --keep-alive-timeout.
    expect(responses.map((r) => r.status)).toEqual([200])
    // Said so in the answer: a client told keep-alive would send its next request on the closing
    // connection, to have it reset unanswered.
    expect(responses[0]?.headers.connection).toBe('close')
    // Held up past --shutdown-timeout by the idle connection, it would exit 1.
    expect(exitCode).toBe(0)
  })
})

describe('a request that never finishes arriving once shutdown has begun', () => {
  it('has the process exit 1 at --shutdown-timeout, saying so, with nothing of the request written', async () => {
    const { responses, exitCode, output, database } = await createInFlightAtShutdown(
      // The request may take far longer than the shutdown: only --shutdown-timeout ends the wait.
      ['--shutdown-timeout', '2s', '--request-timeout', '60s'],
      8_000,
      // The rest of the body never comes.
      () => '',
    )
    expect(exitCode).toBe(1)
    expect(responses).toEqual([])
    const lines = logEntries<{ level: number; msg: string; timeoutMs?: number }>(output)
    expect(lines.find((line) => line.msg.startsWith('shutdown timed out'))).toMatchObject({
      level: 50,
      msg: 'shutdown timed out; exiting with requests unfinished',
      timeoutMs: 2000,
    })
    expect(lines.map((line) => line.msg)).not.toContain('stopped')
    const db = new Database(database, { readonly: true })
    try {
      expect(db.prepare('SELECT count(*) FROM plants').pluck().get()).toBe(0)
    } finally {
      db.close()
    }
  })
})

describe('a second stop signal while the server is shutting down', () => {
  it('is logged and changes nothing: the shutdown under way finishes and exits 0', async () => {
    const server = await startServer([
      '--database-url',
      'sqlite::memory:',
      '--drain-delay',
      '1500ms',
      '--shutdown-timeout',
      '10s',
    ])
    try {
      server.process.kill('SIGTERM')
      await vi.waitFor(() => expect(server.output()).toContain('"shutting down"'), { timeout: 10_000 })
      // As an operator's second Ctrl-C, during the drain delay.
      server.process.kill('SIGINT')
      expect(await server.exited).toBe(0)
      const messages = logEntries<{ msg: string; signal?: string }>(server.output())
      expect(messages.filter((m) => m.msg === 'shutting down')).toEqual([
        expect.objectContaining({ signal: 'SIGTERM' }),
      ])
      expect(messages.filter((m) => m.msg.startsWith('already shutting down'))).toEqual([
        expect.objectContaining({
          msg: 'already shutting down; --shutdown-timeout bounds the wait',
          signal: 'SIGINT',
        }),
      ])
      expect(messages.filter((m) => m.msg === 'stopped')).toHaveLength(1)
    } finally {
      await server.end()
    }
  })
})

describe.each(storeKinds)('a SIGTERM on $name while the retention sweep waits on a lock', (kind) => {
  it.skipIf(kind.name !== 'postgres')(
    'exits 0 once the sweep gives up its chunk, not at --shutdown-timeout with exit 1',
    async () => {
      const url = await kind.freshUrl()
      // The database timeout is far past the shutdown timeout: only the sweep's own lock timeout
      // lets the stop finish in time.
      const server = await startServer([
        '--database-url',
        url,
        '--database-timeout',
        '60s',
        '--retention-interval',
        '1s',
      ])
      try {
        await whileLocked(url, 'webhook_deliveries', async (client) => {
          // A sweep runs every second: the next one waits on the lock.
          const waiting = async () => {
            // Activity statistics are read once per transaction unless the snapshot is dropped.
            await client.query('SELECT pg_stat_clear_snapshot()')
            return (
              (
                await client.query(
                  `SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'
                   AND query LIKE '%DELETE FROM webhook_deliveries%'`,
                )
              ).rows[0].n > 0
            )
          }
          const deadline = Date.now() + 15_000
          while (!(await waiting())) {
            if (Date.now() > deadline) throw new Error('the sweep never waited on the lock')
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
          expect(await server.stop('SIGTERM')).toBe(0)
        })
        expect(server.output()).toContain('"msg":"stopped"')
        expect(server.output()).not.toContain('shutdown timed out')
      } finally {
        await server.end()
      }
    },
    40_000,
  )
})

describe('a connection that has not sent a whole request when shutdown begins', () => {
  it.each([
    // A load balancer's or a browser's preconnect: open, and nothing sent on it yet.
    ['nothing sent yet', ''],
    ['part of a head sent', 'GET /plants HTTP/1.1\r\nHost: x\r\n'],
  ])(
    'is closed with the port, %s, so that it does not hold the exit up until --headers-timeout',
    async (_, sent) => {
      const server = await startServer(['--database-url', 'sqlite::memory:', '--shutdown-timeout', '3s'])
      try {
        const socket = await openSocket(server.port)
        const closed = readUntilClose(socket, 8_000)
        if (sent !== '') {
          socket.write(sent)
          // Read by the server by the time it answers a request sent after it, on another connection.
          expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200)
        }
        server.process.kill('SIGTERM')
        // Kept open, it would hold the shutdown until --headers-timeout (10 s), past --shutdown-timeout.
        expect(await closed).toBe('')
        expect(await server.exited).toBe(0)
      } finally {
        await server.end()
      }
    },
  )
})
