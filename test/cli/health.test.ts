import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { readyzUrl } from '../../src/cli/health.js'
import { runHere } from '../helpers/cli.js'

let server: Server | undefined

/** A stand-in for serve's /readyz that answers `status`, or what `answer` says at the time. */
async function readyz(answer: () => number): Promise<{ port: number; asked: string[] }> {
  const asked: string[] = []
  server = createServer((request, response) => {
    asked.push(`${request.method} ${request.url}`)
    response.writeHead(answer(), { 'content-type': 'application/json' }).end('{"status":"x"}')
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, asked }
}

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  server = undefined
})

describe('plantstore health', () => {
  it('exits 0 when /readyz answers 200, asking it once at the port the environment gives serve', async () => {
    const { port, asked } = await readyz(() => 200)
    const result = await runHere(['health'], { PORT: String(port) })
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' })
    expect(asked).toEqual(['GET /readyz'])
  })

  it('exits 1 and says what it got when the service is not ready (503 while draining)', async () => {
    const { port } = await readyz(() => 503)
    const result = await runHere(['health', '--port', String(port)])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(`plantstore: not ready: http://127.0.0.1:${port}/readyz: it answered 503\n`)
  })

  it('exits 1 with the connection error when nothing listens', async () => {
    const { port } = await readyz(() => 200)
    await new Promise((resolve) => server?.close(resolve))
    server = undefined
    const result = await runHere(['health', '--host', '127.0.0.1', '--port', String(port)])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`ECONNREFUSED 127.0.0.1:${port}`)
  })

  it('with --wait asks again until the service is ready', async () => {
    const readyAt = Date.now() + 600
    const { port, asked } = await readyz(() => (Date.now() >= readyAt ? 200 : 503))
    const result = await runHere(['health', '--port', String(port), '--wait', '10s'])
    expect(result.code).toBe(0)
    expect(asked.length).toBeGreaterThan(1)
  })

  it('with --wait gives up once the wait is over, and says how long it waited', async () => {
    const { port } = await readyz(() => 503)
    const started = Date.now()
    const result = await runHere(['health', '--port', String(port), '--wait', '1s'])
    expect(result.code).toBe(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
    expect(result.stderr).toBe(
      `plantstore: not ready: http://127.0.0.1:${port}/readyz: it answered 503 (waited 1s)\n`,
    )
  })

  it.each([
    [['--port', '0'], 'health needs the port serve listens on: --port (PORT) 0 names none'],
    [['--port', 'x'], 'invalid --port (PORT) "x": expected an integer from 0 to 65535'],
    [['--wait', 'soon'], 'invalid --wait "soon": expected a duration such as 60s'],
  ])('refuses %j as a usage error (exit 2)', async (args, message) => {
    const result = await runHere(['health', ...args])
    expect(result).toEqual({ code: 2, stdout: '', stderr: `plantstore: ${message}\n` })
  })

  it('asks a wildcard address on loopback, and writes an IPv6 address in brackets', () => {
    expect(readyzUrl('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080/readyz')
    expect(readyzUrl('::', 8080)).toBe('http://[::1]:8080/readyz')
    expect(readyzUrl('::1', 81)).toBe('http://[::1]:81/readyz')
    expect(readyzUrl('plants.internal', 80)).toBe('http://plants.internal:80/readyz')
  })
})
