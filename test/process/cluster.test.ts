import cluster, { type Worker } from 'node:cluster'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { startCluster } from '../../src/cli/cluster.js'
import { resolveServeConfig } from '../../src/config.js'
import { createLogger } from '../../src/log.js'
import { callOnNewConnection, workerPids } from '../helpers/cluster.js'
import { captureLines } from '../helpers/log.js'
import { BIN, issueToken, runCli } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

/** The primary runs in this process; its workers are real `plantstore serve` processes. */
function primary(
  databaseUrl: string,
  options: { metricsTimeoutMs?: number } = {},
  level: 'info' | 'warn' = 'info',
) {
  const args = [
    'serve',
    '--port',
    '0',
    '--database-url',
    databaseUrl,
    '--workers',
    '2',
    '--log-level',
    'warn',
    // A frozen worker's lag, or a busy machine's, must not be answered by load shedding (also 503).
    '--max-event-loop-delay',
    'off',
  ]
  cluster.setupPrimary({ exec: BIN, args, execArgv: [], silent: true })
  const { lines, stream: sink } = captureLines()
  const config = resolveServeConfig({ port: '0', databaseUrl, workers: '2' }, {})
  return { running: startCluster(config, createLogger(level, sink), options), log: () => lines.join('') }
}

describe('the cluster primary', () => {
  it('stops with 1 and says why on stderr when it cannot listen on the host, before forking a worker', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    // 192.0.2.1 (TEST-NET-1) is no address of this machine: listening there fails at once.
    const config = resolveServeConfig({ port: '0', host: '192.0.2.1', databaseUrl: url, workers: '2' }, {})
    const { lines, stream } = captureLines()
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      const running = startCluster(config, createLogger('info', stream))
      expect(await running.done).toBe(1)
      expect(stderr).toHaveBeenCalledWith(
        expect.stringMatching(/^plantstore: --host 192\.0\.2\.1: listen EADDRNOTAVAIL: .*192\.0\.2\.1\n$/),
      )
    } finally {
      stderr.mockRestore()
    }
    expect(lines.join('')).toContain('"msg":"cannot listen on 192.0.2.1; stopping"')
    expect(Object.keys(cluster.workers ?? {})).toEqual([])
  })

  it('announces the address once both workers listen, and stops both cleanly', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const { running, log } = primary(url)
    const address = await running.ready
    const workers = (JSON.parse(log().split('\n')[0] as string) as { workers: number[] }).workers
    expect(workers).toHaveLength(2)
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${address}/healthz`, { headers: { connection: 'close' } })
      expect(res.status).toBe(200)
    }
    expect(await running.stop('test')).toBe(0)
    expect(await running.done).toBe(0)
    expect(log()).toContain('"codes":[0,0]')
  })

  it('announces the address at a log level above info too, the one place a chosen port is told', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    expect((await runCli(['migrate', '--database-url', url])).code).toBe(0)
    const { running, log } = primary(url, {}, 'warn')
    const address = await running.ready
    const lines = log().trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 30, msg: `listening on ${address}` })
    expect(await running.stop('test')).toBe(0)
    expect(await running.done).toBe(0)
  })

  it('gives up with code 1 when a worker fails right after starting', async () => {
    // A directory is no database file: every worker fails as it opens it.
    const { running, log } = primary(`sqlite:${tempDir()}`)
    expect(await running.done).toBe(1)
    expect(log()).toContain('a worker failed right after starting')
    // The worker is named in a field of its own: a second "pid" would make the line's own ambiguous.
    const exited = log()
      .split('\n')
      .filter((line) => line.includes('worker exited'))
    expect(exited.length).toBeGreaterThan(0)
    for (const line of exited) {
      expect(line.match(/"pid":/g)).toHaveLength(1)
      expect(JSON.parse(line)).toMatchObject({ pid: process.pid, worker: expect.any(Number) })
    }
  })

  it('announces only once N workers listen at the same time, counting each worker once', async () => {
    // Nothing listens on port 1: the workers go on retrying the database and never listen
    // themselves, so every listen here is one the test reports for them.
    const { running, log } = primary('postgres://plantstore:x@127.0.0.1:1/plantstore')
    try {
      await vi.waitFor(() => expect(Object.keys(cluster.workers ?? {})).toHaveLength(2))
      const [first, second] = Object.values(cluster.workers ?? {}) as [Worker, Worker]
      const address = { address: '127.0.0.1', port: 8080, addressType: 4 }
      let announced: string | undefined
      void running.ready.then((url) => {
        announced = url
      })
      const settle = () => new Promise((resolve) => setImmediate(resolve))
      // A worker listening on two addresses (a --host that resolves to both) is one worker.
      cluster.emit('listening', first, address)
      cluster.emit('listening', first, address)
      await settle()
      expect(announced).toBeUndefined()
      // It crashes while its sibling is still starting; its replacement and it are not two.
      cluster.emit('exit', first, 1, null)
      await vi.waitFor(() => expect(Object.keys(cluster.workers ?? {})).toHaveLength(3), { timeout: 5000 })
      const replacement = Object.values(cluster.workers ?? {}).find(
        (w) => w !== first && w !== second,
      ) as Worker
      cluster.emit('listening', replacement, address)
      await settle()
      expect(announced).toBeUndefined()
      expect(log()).toContain('replacement worker listening')
      cluster.emit('listening', second, address)
      await settle()
      expect(announced).toBe('http://127.0.0.1:8080')
    } finally {
      expect(await running.stop('test')).toBe(0)
    }
  })

  it('answers a scrape 503 while a worker does not send its metrics, and 200 once it does', async () => {
    const url = `sqlite:${join(tempDir(), 'p.db')}`
    const token = await issueToken(url, 'prometheus', 'metrics:read')
    const { running, log } = primary(url, { metricsTimeoutMs: 2000 })
    const address = await running.ready
    const [, frozen] = workerPids(log()) as [number, number]
    process.kill(frozen, 'SIGSTOP')
    let scrapes: Promise<Awaited<ReturnType<typeof callOnNewConnection>>>[] = []
    try {
      // The primary hands one of two new connections to each idle worker: the frozen one holds its
      // scrape, the other asks the primary, which gives up on the frozen worker.
      scrapes = [0, 1].map(() => callOnNewConnection(address, 'GET', '/metrics', token))
      const answered = await Promise.race(scrapes)
      expect(answered.status).toBe(503)
      expect(answered.headers['retry-after']).toBe('1')
      expect(answered.headers['content-type']).toMatch(/^application\/json/)
      const body = JSON.parse(answered.body) as Record<string, unknown>
      expect(Object.keys(body).sort()).toEqual(['error', 'message'])
      expect(body.error).toBe(50301)
      expect(body.message).toMatch(/metrics of every worker could not be gathered/)
      expect(log()).toContain('workers did not send their metrics')
    } finally {
      process.kill(frozen, 'SIGCONT')
    }
    // Thawed, the worker answers the scrape it held, and this time every worker sends its series.
    const statuses = (await Promise.all(scrapes)).map((answer) => answer.status)
    expect(statuses.sort()).toEqual([200, 503])
    expect(await running.stop('test')).toBe(0)
  })
})
