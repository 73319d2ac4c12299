import { readdirSync, readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  answeredBy,
  callOnNewConnection as call,
  leaseTakers,
  readyAddresses,
  readyWorkers,
  replacementsListening,
  servedBy,
  waitUntil,
  workerPids,
} from '../helpers/cluster.js'
import { logEntries } from '../helpers/log.js'
import { issueToken, type RunningServer, runCli, startServer } from '../helpers/process.js'
import { openSocket } from '../helpers/raw-http.js'
import {
  createdEvents,
  postgresKind,
  type StoreKind,
  storedPlantIds,
  storeKinds,
  tempDir,
} from '../helpers/stores.js'

/**
 * A keep-alive request on a connection of its own, left open: `answered`, `closed` without an
 * answer, or `hanging` when neither happens within `waitMs`.
 */
async function holdRequest(
  port: number,
  waitMs = 5000,
): Promise<{ outcome: 'answered' | 'closed' | 'hanging'; socket: Socket }> {
  const socket = await openSocket(port)
  socket.on('error', () => {})
  const outcome = await new Promise<'answered' | 'closed' | 'hanging'>((resolve) => {
    let received = ''
    const timer = setTimeout(() => resolve('hanging'), waitMs)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      received += chunk
      if (received.includes('\r\n\r\n')) resolve('answered')
    })
    socket.on('close', () => resolve(received === '' ? 'closed' : 'answered'))
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
    socket.once('close', () => clearTimeout(timer))
    socket.once('data', () => clearTimeout(timer))
  })
  return { outcome, socket }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// These tests are about correctness across processes, not load shedding: on a busy machine the
// event-loop-delay guard would answer some requests 503.
const UNGUARDED = ['--rate-limit', 'off', '--max-event-loop-delay', 'off']

/** `serve --workers 2` on `url`, logging every request (servedBy reads which worker answered). */
const twoWorkersLogging = (url: string) =>
  startServer(['--database-url', url, '--workers', '2', '--log-level', 'debug', ...UNGUARDED])

describe('serve --workers', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.end()
    server = undefined
  })

  it('refuses more than one worker on sqlite::memory:, with exit 2 and one line', async () => {
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--database-url',
      'sqlite::memory:',
      '--workers',
      '2',
    ])
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toMatch(
      /--workers \(WORKERS\) 2 cannot share --database-url \(DATABASE_URL\) sqlite::memory:/,
    )
  })

  it('says on stderr why it cannot listen on --host with --port 0, as one process does, and exits 1', async () => {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: listening there fails at once.
    const args = [
      'serve',
      '--port',
      '0',
      '--host',
      '192.0.2.1',
      '--database-url',
      `sqlite:${join(tempDir(), 'p.db')}`,
    ]
    const single = await runCli(args)
    const workers = await runCli([...args, '--workers', '2'])
    expect([single.code, workers.code]).toEqual([1, 1])
    expect(single.stderr).toMatch(/^plantstore: --host 192\.0\.2\.1: listen EADDRNOTAVAIL: .*192\.0\.2\.1\n$/)
    expect(workers.stderr).toBe(single.stderr)
    expect(workers.stdout).toMatch(/"msg":"cannot listen on 192\.0\.2\.1; stopping"/)
  })

  it('cuts a token given as --host to its public id on stderr, with workers as in one process', async () => {
    // A name that does not resolve: the reason quotes it (--host <host>: getaddrinfo ENOTFOUND <host>).
    const host = 'pst_0123456789abcdef_secretpartofatoken'
    const args = [
      'serve',
      '--port',
      '0',
      '--host',
      host,
      '--database-url',
      `sqlite:${join(tempDir(), 'p.db')}`,
    ]
    const single = await runCli(args)
    const workers = await runCli([...args, '--workers', '2'])
    expect([single.code, workers.code]).toEqual([1, 1])
    for (const { stderr, stdout } of [single, workers]) {
      expect(stderr).toMatch(/^plantstore: .*pst_0123456789abcdef_\[redacted\]\n$/)
      expect(stderr + stdout).not.toContain('secretpartofatoken')
    }
  })

  it.each(['0', 'two', '-1', '65'])('refuses --workers %s with exit 2', async (value) => {
    const result = await runCli(['serve', '--port', '0', '--workers', value])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/invalid --workers \(WORKERS\)/)
  })

  it.skipIf(process.platform !== 'linux')(
    'gives the file descriptor limit of one worker under /metrics, not the limits of all summed',
    async () => {
      const url = `sqlite:${join(tempDir(), 'p.db')}`
      const prometheus = await issueToken(url, 'prometheus', 'metrics:read')
      server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
      const pids = workerPids(server.output())
      expect(pids).toHaveLength(2)
      const softLimit = (pid: number) =>
        Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1])
      const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length
      const scrape = await call(server.url, 'GET', '/metrics', prometheus)
      const after = pids.map(openFds)
      expect(scrape.status).toBe(200)
      const sample = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(scrape.body)?.[1])
      expect(sample('plantstore_process_max_fds')).toBe(softLimit(pids[0] as number))
      // The fullest worker's count (give or take the scrape's own connection), not both added up.
      expect(sample('plantstore_process_open_fds')).toBeLessThanOrEqual(Math.max(...after) + 2)
    },
  )

  it('writes every line whole though the workers share stdout: a long one is cut to fit one pipe write', async () => {
    server = await twoWorkersLogging(`sqlite:${join(tempDir(), 'p.db')}`)
    const running = server
    // A URL near --max-header-size, once in the request line and once in the 404's detail, from
    // both workers at once: lines past PIPE_BUF (4096 bytes) could be split by each other.
    const path = `/nowhere/${'a'.repeat(12_000)}`
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => call(running.url, 'GET', path, '')))
      for (const answer of answers) expect(answer.status).toBe(404)
    }
    const completed = () => running.output().match(/"msg":"request completed"/g)?.length ?? 0
    await waitUntil(() => completed() >= 40)
    const lines = running.output().trimEnd().split('\n')
    for (const line of lines) {
      expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4096)
      expect(Object.keys(JSON.parse(line))).toEqual(expect.arrayContaining(['level', 'time', 'pid', 'msg']))
    }
    // Cut, but still saying which request it was.
    const urls = lines.map((line) => JSON.parse(line).url).filter((url) => url !== undefined)
    expect(urls).toHaveLength(40)
    for (const url of urls) expect(url).toMatch(/^\/nowhere\/a{64,}…$/)
  })

  it('replaces a worker killed right after it listened, and keeps serving', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
    const running = server
    const [killed, kept] = workerPids(running.output()) as [number, number]
    // Well within 5 s of its start: only its having listened makes it a crash, not a failed start.
    process.kill(killed, 'SIGKILL')
    await waitUntil(() => readyWorkers(running.output()).length === 3)
    const replacement = readyWorkers(running.output()).find((pid) => pid !== killed && pid !== kept)
    expect(replacement).toBeDefined()
    expect(alive(replacement as number)).toBe(true)
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200)
    expect(running.output()).not.toContain('failed right after starting')
    expect(await running.stop('SIGTERM')).toBe(0)
    server = undefined
  })

  it('kills a worker that has not stopped 2 s past --shutdown-timeout, and exits 1 saying so', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer([
      '--database-url',
      url,
      '--workers',
      '2',
      '--shutdown-timeout',
      '1s',
      ...UNGUARDED,
    ])
    const running = server
    const [stuck, other] = workerPids(running.output()) as [number, number]
    // Stopped, it cannot take the signal, let alone enforce --shutdown-timeout on itself.
    process.kill(stuck, 'SIGSTOP')
    try {
      const began = Date.now()
      expect(await running.stop('SIGTERM')).toBe(1)
      expect(Date.now() - began).toBeGreaterThanOrEqual(2900)
      server = undefined
      const lines = logEntries<{ msg: string; codes?: number[] }>(running.output())
      expect(lines.map((line) => line.msg)).toContain('workers did not stop in time')
      // The other stopped by itself, cleanly.
      expect(lines.find((line) => line.msg === 'stopped' && line.codes)?.codes?.sort()).toEqual([0, 1])
      expect([alive(stuck), alive(other)]).toEqual([false, false])
    } finally {
      if (alive(stuck)) process.kill(stuck, 'SIGKILL')
    }
  })

  it('keeps the counts a killed worker had sent in /metrics after its replacement, so no sum drops', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const reader = await issueToken(url, 'reader', 'plants:read')
    const prometheus = await issueToken(url, 'prometheus', 'metrics:read')
    server = await twoWorkersLogging(url)
    const running = server
    for (let i = 0; i < 20; i++)
      expect((await call(running.url, 'GET', '/plants/1', reader)).status).toBe(404)
    await waitUntil(() => servedBy(running.output(), '/plants/1').size === 2)
    const reads = /^plantstore_http_requests_total\{method="GET",route="\/plants\/:id",status="404"\} (\d+)$/m
    const scraped = async () => {
      const scrape = await call(running.url, 'GET', '/metrics', prometheus)
      expect(scrape.status).toBe(200)
      return { reads: reads.exec(scrape.body)?.[1] }
    }
    expect((await scraped()).reads).toBe('20')

    const [killed] = [...servedBy(running.output(), '/plants/1')] as [number]
    process.kill(killed, 'SIGKILL')
    await waitUntil(() => readyWorkers(running.output()).length === 3)
    const after = await scraped()
    expect(after.reads).toBe('20')
    expect((await call(running.url, 'GET', '/plants/1', reader)).status).toBe(404)
    expect((await scraped()).reads).toBe('21')
  })

  // Several crash-and-replace cycles with growing waits: on a machine busy with other tests they
  // take longer than the default timeout allows, though the waits themselves are what is checked.
  it('waits longer before each replacement while the replacements keep crashing right after they listen', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
    const running = server
    const replaceDelays = () =>
      running
        .output()
        .split('\n')
        .filter((line) => line.includes('"worker exited"'))
        .map((line) => (JSON.parse(line) as { replaceInMs: number }).replaceInMs)
    // Each victim is one the primary has seen listen: a worker's own "ready" line can reach the log
    // before the primary hears of it, and a worker killed in between is a failed start.
    let newest = workerPids(running.output()).at(-1) as number
    for (let crash = 1; crash <= 4; crash++) {
      process.kill(newest, 'SIGKILL')
      await waitUntil(() => replacementsListening(running.output()).length === crash)
      newest = replacementsListening(running.output()).at(-1) as number
    }
    expect(running.output()).not.toContain('failed right after starting')
    expect(replaceDelays()).toEqual([100, 200, 400, 800])
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200)
    expect(await running.stop('SIGTERM')).toBe(0)
    server = undefined
  }, 60_000)

  // Its time is mostly process starts through the crashing worker's back-off, which on a busy
  // machine can outlast the suite's default test timeout.
  it('backs off the replacements of a crashing worker only, not those of its sibling', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
    const running = server
    const exits = () =>
      running
        .output()
        .split('\n')
        .filter((line) => line.includes('"worker exited"'))
        .map((line) => JSON.parse(line) as { worker: number; replaceInMs: number })
    const [crashing, sibling] = workerPids(running.output()) as [number, number]
    let newest = crashing
    const crash = async (pid: number) => {
      const replaced = replacementsListening(running.output()).length
      process.kill(pid, 'SIGKILL')
      await waitUntil(() => replacementsListening(running.output()).length === replaced + 1)
      return replacementsListening(running.output()).at(-1) as number
    }
    for (let i = 0; i < 3; i++) newest = await crash(newest)
    // The sibling's first crash: its own first wait, whatever the other's replacements did.
    await crash(sibling)
    newest = await crash(newest)
    expect(running.output()).not.toContain('failed right after starting')
    expect(exits().map((e) => e.replaceInMs)).toEqual([100, 200, 400, 100, 800])
    expect(exits()[3]?.worker).toBe(sibling)
    expect(await running.stop('SIGTERM')).toBe(0)
    server = undefined
  }, 60_000)

  it('serves every worker, and those that replace them, on the one port it announces for --port 0', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await twoWorkersLogging(url)
    const running = server
    const first = workerPids(running.output())
    // Each worker says where it listens: all on the announced port.
    expect(readyAddresses(running.output())).toEqual(new Set([running.url]))
    await waitUntil(async () => {
      expect((await call(running.url, 'GET', '/healthz', '')).status).toBe(200)
      return servedBy(running.output(), '/healthz').size === 2
    })
    expect([...servedBy(running.output(), '/healthz')].sort()).toEqual([...first].sort())

    // With both gone at once no process holds the port: the replacements must take the same one.
    for (const pid of first) process.kill(pid, 'SIGKILL')
    await waitUntil(() => readyWorkers(running.output()).length === 4)
    expect(readyAddresses(running.output())).toEqual(new Set([running.url]))
    const since = running.output().length
    await waitUntil(async () => {
      expect((await call(running.url, 'GET', '/healthz', '')).status).toBe(200)
      return servedBy(running.output().slice(since), '/healthz').size === 2
    })
    expect(await running.stop('SIGTERM')).toBe(0)
    server = undefined
  })

  it('closes a connection past --max-connections at once, as one process does, however the workers are filled', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer([
      '--database-url',
      url,
      '--workers',
      '2',
      '--max-connections',
      '1',
      '--keep-alive-timeout',
      '30s',
      ...UNGUARDED,
    ])
    const running = server
    // Which worker takes a connection is the primary's choice: whatever the split, at most one held
    // connection per worker is answered, and every other is closed, none left waiting.
    const held = []
    for (let i = 0; i < 4; i++) held.push(await holdRequest(running.port))
    const outcomes = held.map((h) => h.outcome)
    expect(outcomes).not.toContain('hanging')
    const answered = outcomes.filter((o) => o === 'answered').length
    expect(answered).toBeGreaterThanOrEqual(1)
    expect(answered).toBeLessThanOrEqual(2)
    // Once the held connections are gone, their places are free again.
    for (const h of held) h.socket.destroy()
    await vi.waitFor(
      async () => {
        const again = await holdRequest(running.port)
        again.socket.destroy()
        expect(again.outcome).toBe('answered')
      },
      { timeout: 10_000, interval: 100 },
    )
    expect(await running.stop('SIGTERM')).toBe(0)
    server = undefined
  })

  it.each(['SIGTERM', 'SIGHUP'] as const)('stops every worker on %s and exits 0', async (signal) => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
    const pids = workerPids(server.output())
    expect(pids).toHaveLength(2)
    expect(pids.every(alive)).toBe(true)
    expect(await server.stop(signal)).toBe(0)
    server = undefined
    expect(pids.filter(alive)).toEqual([])
  })

  it('leaves no worker serving on its own when the first process is killed outright', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    server = await startServer(['--database-url', url, '--workers', '2', ...UNGUARDED])
    const pids = workerPids(server.output())
    expect(pids.filter(alive)).toHaveLength(2)
    await server.stop('SIGKILL')
    server = undefined
    await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 5000 })
  })
})

// What two processes sharing one database must get right, on every store: each worker has its own
// connections, caches and batches, and only the database keeps them consistent.
describe.each(storeKinds)('serve --workers on $name', (kind) => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.end()
    server = undefined
  })

  it('loses and duplicates no create when two processes write one database', async () => {
    const url = await kind.freshUrl()
    const token = await issueToken(url, 'w')
    server = await twoWorkersLogging(url)
    const base = server.url
    const pids = workerPids(server.output())
    expect(pids).toHaveLength(2)
    // Both workers have verified the token and opened the database before the load: a worker still
    // busy with its first request would leave the primary to hand every connection to the other.
    const running = server
    await waitUntil(async () => {
      await call(base, 'GET', '/plants/1', token)
      return servedBy(running.output(), '/plants/1').size === 2
    })

    // Every id of `twice` is sent twice at once: exactly one of the two may win, whichever worker
    // takes it. Every id of `once` is sent once, among them: each must win.
    const twice = Array.from({ length: 100 }, (_, i) => 9_000_000_000_000_000_000n + BigInt(i))
    const once = Array.from({ length: 100 }, (_, i) => 9_100_000_000_000_000_000n + BigInt(i))
    const create = (id: bigint) => call(base, 'POST', '/plants', token, `{"id":${id},"name":"p${id}"}`)
    const [pairs, singles] = await Promise.all([
      Promise.all(twice.map((id) => Promise.all([create(id), create(id)]))),
      Promise.all(once.map(create)),
    ])
    for (const pair of pairs) expect(pair.map((answer) => answer.status).sort()).toEqual([200, 409])
    expect(singles.map((answer) => answer.status)).toEqual(once.map(() => 200))
    // Both workers served: their request lines carry their own pid.
    expect([...servedBy(server.output(), '/plants')].sort()).toEqual([...pids].sort())

    expect(await server.stop('SIGTERM')).toBe(0)
    server = undefined
    // Each acknowledged plant is stored, and created once: one plant.created event each.
    expect(await storedPlantIds(url)).toEqual(new Set([...twice, ...once].map(String)))
    expect(await createdEvents(url)).toBe(twice.length + once.length)
  })

  it('shows a plant one worker created in the first page every worker answers, though each kept it', async () => {
    const url = await kind.freshUrl()
    const token = await issueToken(url, 'w')
    server = await twoWorkersLogging(url)
    const running = server
    const page = '/plants?limit=100'
    // Both workers read the empty page (and keep it) before the create.
    await waitUntil(async () => {
      expect((await call(running.url, 'GET', page, token)).body).toBe('[]')
      return servedBy(running.output(), page).size === 2
    })
    const body = '{"id":9007199254740993,"name":"a"}'
    expect((await call(running.url, 'POST', '/plants', token, body)).status).toBe(200)
    const since = running.output().length
    await waitUntil(async () => {
      expect((await call(running.url, 'GET', page, token)).body).toBe(`[${body}]`)
      return servedBy(running.output().slice(since), page).size === 2
    })
  })

  it('answers /metrics with the requests of every worker summed, whichever worker takes the scrape', async () => {
    const url = await kind.freshUrl()
    const reader = await issueToken(url, 'reader', 'plants:read')
    const prometheus = await issueToken(url, 'prometheus', 'metrics:read')
    const admin = await issueToken(url, 'admin', 'webhooks:manage')
    server = await twoWorkersLogging(url)
    const running = server
    const pids = workerPids(running.output()).sort()
    expect(pids).toHaveLength(2)
    for (let i = 0; i < 20; i++)
      expect((await call(running.url, 'GET', '/plants/1', reader)).status).toBe(404)
    await waitUntil(() => servedBy(running.output(), '/plants/1').size === 2)
    // With a subscription each worker starts a dispatcher; the lease goes to exactly one of them.
    const hook = await call(
      running.url,
      'POST',
      '/webhooks',
      admin,
      '{"url":"https://receiver.example/hook"}',
    )
    expect(hook.status).toBe(201)
    await waitUntil(() => leaseTakers(running.output()).length > 0)
    // The holder logs from its dispatcher thread, which then tells the process's main thread by a
    // message: a scrape that follows the log line closely can reach the main thread before that
    // message does, so wait for one scrape to count the lease before every scrape must.
    const held = /^plantstore_webhook_dispatcher_lease_held 1$/m
    let waited = 0
    await waitUntil(async () => {
      waited++
      return held.test((await call(running.url, 'GET', '/metrics', prometheus)).body)
    })
    // Only the scrapes below count towards both workers answering one.
    await waitUntil(() => answeredBy(running.output(), '/metrics').length === waited)
    const scrapers = () => new Set(answeredBy(running.output(), '/metrics').slice(waited))

    const reads = /^plantstore_http_requests_total\{method="GET",route="\/plants\/:id",status="404"\} (\d+)$/m
    for (let i = 0; i < 20 && scrapers().size < 2; i++) {
      const scrape = await call(running.url, 'GET', '/metrics', prometheus)
      expect(scrape.status).toBe(200)
      expect(scrape.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
      expect(reads.exec(scrape.body)?.[1]).toBe('20')
      expect(scrape.body).toMatch(held)
    }
    expect([...scrapers()].sort()).toEqual(pids)
    expect(leaseTakers(running.output())).toHaveLength(1)
    const denied = await call(running.url, 'GET', '/metrics', reader)
    expect(denied.status).toBe(403)
  })

  it('refuses a token revoked by the CLI in every worker', async () => {
    const url = await kind.freshUrl()
    const token = await issueToken(url, 'w')
    server = await twoWorkersLogging(url)
    const running = server
    // 404: the token was accepted (and is now cached in both workers), the plant does not exist.
    await waitUntil(async () => {
      expect((await call(running.url, 'GET', '/plants/1', token)).status).toBe(404)
      return servedBy(running.output(), '/plants/1').size === 2
    })

    const id = (
      JSON.parse((await runCli(['token', 'list', '--json', '--database-url', url])).stdout) as {
        id: string
      }[]
    )[0]?.id as string
    expect((await runCli(['token', 'revoke', id, '--database-url', url])).code).toBe(0)

    const refused = async () => {
      for (let i = 0; i < 6; i++) {
        const answer = await call(running.url, 'GET', '/plants/1', token)
        expect(answer.status).toBe(401)
        expect(JSON.parse(answer.body).error).toBe(40105)
      }
    }
    // SQLite re-reads a token whose file another process wrote to, from the next request on;
    // PostgreSQL tells each worker by NOTIFY, within the 5 seconds docs/postgresql.md promises.
    if (kind.name === 'sqlite') await refused()
    else await vi.waitFor(refused, { timeout: 5000, interval: 50 })
    // And every worker keeps refusing it: the next requests reach both, and each answers 401.
    const since = running.output().length
    await refused()
    await waitUntil(() => servedBy(running.output().slice(since), '/plants/1').size === 2)
  })
})

describe.skipIf(!postgresKind)('serve --workers on postgres, rate limited', () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.end()
    server = undefined
  })

  it("holds a token's limit between the workers, not once per worker", async () => {
    const url = await (postgresKind as StoreKind).freshUrl()
    // An hour's window on the database's clock (the machine's own here): not one about to end.
    const left = 3_600_000 - (Date.now() % 3_600_000)
    if (left < 30_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
    const token = await issueToken(url, 'limited')
    server = await startServer([
      '--database-url',
      url,
      '--workers',
      '2',
      '--log-level',
      'debug',
      '--rate-limit',
      '40/1h',
      '--max-event-loop-delay',
      'off',
    ])
    const statuses: number[] = []
    // Each on a connection of its own, which Node hands to either worker.
    for (let i = 0; i < 120; i++) statuses.push((await call(server.url, 'GET', '/plants/1', token)).status)
    expect(new Set(statuses)).toEqual(new Set([404, 429]))
    expect(servedBy(server.output(), '/plants/1').size).toBe(2)
    const admitted = statuses.filter((status) => status === 404).length
    // Within 10 % of the limit; counted per worker it would be 80.
    expect(admitted).toBeGreaterThanOrEqual(36)
    expect(admitted).toBeLessThanOrEqual(44)
  })
})
