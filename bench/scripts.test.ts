import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '..')

// The wrk scripts against a server that records what it is asked: the ids each sends are what the
// figures mean (a repeated id is a 409, ids all in one place are not random ones).
describe("the benchmark's wrk scripts", () => {
  it.each([
    ['list-after.lua', 'the page after', /^\/plants\?limit=100&after=([0-9]+)$/],
    ['get.lua', 'the plant of', /^\/plants\/([0-9]+)$/],
  ])('asks %s for %s a random stored id, a different one nearly every time', async (script, _what, shape) => {
    const paths: string[] = []
    const tokens = new Set<string | undefined>()
    const server = createServer((req, res) => {
      paths.push(req.url ?? '')
      tokens.add(req.headers.authorization)
      res.end('[]')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    try {
      await run('wrk', ['-t1', '-c2', '-d1s', '-s', `bench/${script}`, `http://127.0.0.1:${port}`], {
        cwd: ROOT,
        env: { ...process.env, BENCH_DIR: 'bench', BENCH_ROWS: '1000', BENCH_TOKEN: 't', BENCH_SEED: '7' },
      })
    } finally {
      server.close()
    }
    expect(paths.length).toBeGreaterThan(100)
    expect([...tokens]).toEqual(['Bearer t'])
    // The stored plants' ids: the x-th of 1,000 is x × ⌊(2^63 − 1) ÷ 1,000⌋.
    const stride = (2n ** 63n - 1n) / 1000n
    const places = paths.map((path) => {
      const match = shape.exec(path)
      expect(match, path).not.toBeNull()
      const id = BigInt(match?.[1] ?? -1)
      expect(id % stride, path).toBe(0n)
      return Number(id / stride)
    })
    expect(Math.min(...places)).toBeGreaterThanOrEqual(1)
    expect(Math.max(...places)).toBeLessThanOrEqual(1000)
    // Spread over the int64 range, as random ids are: the largest beyond 2^62.
    expect(Math.max(...places) * Number(stride)).toBeGreaterThan(2 ** 62)
    // Random among 1,000 ids: nearly as many distinct ones as n random draws give, where list.lua
    // asks for one page. The run lasts a second, not a count of requests, so n is what was sent.
    const expected = 1000 * (1 - (1 - 1 / 1000) ** places.length)
    expect(new Set(places).size).toBeGreaterThan(0.9 * expected)
  })

  it('asks find.lua for the page BENCH_PATH names, the same one every time', async () => {
    const paths = new Set<string>()
    const tokens = new Set<string | undefined>()
    let count = 0
    const server = createServer((req, res) => {
      count++
      paths.add(req.url ?? '')
      tokens.add(req.headers.authorization)
      res.end('[]')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const path = '/plants?q=fern&tag=aroid&tag=palm&sort=-updatedAt&limit=100'
    try {
      await run('wrk', ['-t1', '-c2', '-d1s', '-s', 'bench/find.lua', `http://127.0.0.1:${port}`], {
        cwd: ROOT,
        env: { ...process.env, BENCH_DIR: 'bench', BENCH_TOKEN: 't', BENCH_PATH: path },
      })
    } finally {
      server.close()
    }
    expect(count).toBeGreaterThan(100)
    expect([...paths]).toEqual([path])
    expect([...tokens]).toEqual(['Bearer t'])
  })

  /**
   * Runs a wrk script with two threads (one connection each) for a second against a server that
   * responds 200 to everything, and returns what each connection asked for, in order: the path of a
   * GET, the body of a POST.
   */
  async function streamsOf(script: string, seed: string): Promise<string[][]> {
    const streams = new Map<Socket, string[]>()
    const server = createServer((req, res) => {
      const stream = streams.get(req.socket) ?? []
      streams.set(req.socket, stream)
      let body = ''
      req.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk
      })
      req.on('end', () => {
        stream.push(req.method === 'GET' ? (req.url ?? '') : body)
        res.end('[]')
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    try {
      await run('wrk', ['-t2', '-c2', '-d1s', '-s', `bench/${script}`, `http://127.0.0.1:${port}`], {
        cwd: ROOT,
        env: { ...process.env, BENCH_DIR: 'bench', BENCH_ROWS: '1000', BENCH_TOKEN: 't', BENCH_SEED: seed },
      })
    } finally {
      server.close()
    }
    return [...streams.values()].filter((stream) => stream.length > 0)
  }

  it.each(['get.lua', 'list-after.lua'])(
    'gives each wrk thread of %s its own random ids',
    async (script) => {
      const streams = await streamsOf(script, '7')
      expect(streams).toHaveLength(2)
      // wrk asks a thread's script for one request before its connections start, so two threads
      // seeded alike send the same ids one place apart: compared by the runs of three ids they send,
      // which two random streams among 1,000 ids hardly ever share.
      const triples = (stream: string[]) =>
        new Set(stream.slice(0, 2000).map((path, i) => `${path} ${stream[i + 1]} ${stream[i + 2]}`))
      const [a, b] = streams.map(triples) as [Set<string>, Set<string>]
      expect(Math.min(a.size, b.size)).toBeGreaterThan(100)
      expect([...a].filter((triple) => b.has(triple)).length).toBeLessThan(10)
    },
    30_000,
  )

  it('gives each wrk thread of create.lua ids no other thread sends, the same for the same seed', async () => {
    const ids = (streams: string[][]) =>
      streams.map((stream) =>
        stream.map((body) =>
          BigInt((JSON.parse(body.replace(/"id":(\d+)/, '"id":"$1"')) as { id: string }).id),
        ),
      )
    const [first, again] = [await streamsOf('create.lua', '7'), await streamsOf('create.lua', '7')]
    expect(first).toHaveLength(2)
    const all = ids(first).flat()
    expect(all.length).toBeGreaterThan(200)
    expect(new Set(all).size).toBe(all.length)
    for (const id of all) {
      expect(id).toBeGreaterThan(0n)
      expect(id).toBeLessThan(2n ** 63n)
    }
    // Each thread's ids follow from the seed and the thread alone: a run with the same seed sends
    // them again (which connection a thread holds is not known, so each stream is matched to the
    // first run's that shares most of its ids). A run lasts a second, not a count of requests, so
    // two streams are compared over the ids both sent, at most the first 1,000.
    const sharedBy = (earlier: bigint[], later: bigint[]) => {
      const n = Math.min(earlier.length, later.length, 1000)
      const sent = new Set(earlier.slice(0, n))
      return { n, shared: later.slice(0, n).filter((id) => sent.has(id)).length }
    }
    for (const stream of ids(again)) {
      const best = ids(first)
        .map((earlier) => sharedBy(earlier, stream))
        .reduce((a, b) => (b.shared > a.shared ? b : a))
      expect(best.n).toBeGreaterThan(100)
      expect(best.shared).toBeGreaterThanOrEqual(best.n - 2)
    }
  }, 30_000)

  it('gives each wrk thread of create-ascending.lua ascending ids a double holds exactly, apart from the other thread', async () => {
    const streams = (await streamsOf('create-ascending.lua', '7')).map((stream) =>
      stream.map((body) => BigInt((/"id":(\d+)/.exec(body) as RegExpExecArray)[1] as string)),
    )
    expect(streams).toHaveLength(2)
    for (const ids of streams) {
      expect(ids.length).toBeGreaterThan(100)
      ids.forEach((id, i) => {
        if (i > 0) expect(id - (ids[i - 1] as bigint)).toBe(2048n)
        // What JSON.parse makes of it (the references parse ids so) is the id itself.
        expect(BigInt(Number(id))).toBe(id)
        expect(id).toBeGreaterThanOrEqual(2n ** 62n)
        expect(id).toBeLessThan(2n ** 63n)
      })
    }
    const [a, b] = streams as [bigint[], bigint[]]
    const spans = [a, b].map((ids) => [ids[0] as bigint, ids.at(-1) as bigint] as const)
    const [[aFirst, aLast], [bFirst, bLast]] = spans as [[bigint, bigint], [bigint, bigint]]
    expect(aLast < bFirst || bLast < aFirst).toBe(true)
  }, 30_000)
})
