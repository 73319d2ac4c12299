import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { holdReading, releaseReading } from '../../src/http/hold-reading.js'
import { openSocket, parseResponses, readUntilClose } from '../helpers/raw-http.js'

// hold-reading.ts depends on the order in which Node's HTTP server resumes a connection, which no
// documentation promises: this test pins it on a bare Node server (no database module loaded), so
// that it runs on every Node line the service supports.
describe('holding a connection’s reading between pipelined requests', () => {
  it('parses no more than the read at hand while held, and every request once released', async () => {
    let parsed = 0
    let release = () => {}
    const first = new Promise<void>((resolve) => {
      release = resolve
    })
    const queued: (() => void)[] = []
    let latest: ServerResponse | undefined
    let connection: Socket | undefined
    const server = createServer((req, res) => {
      parsed++
      latest = res
      connection = req.socket
      const respond = () => res.end(req.url)
      if (parsed === 1) {
        void first.then(respond)
        return
      }
      holdReading(req.socket, () => latest === res && queued.length > 0)
      queued.push(respond)
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = await openSocket((server.address() as AddressInfo).port)
    try {
      const answers = readUntilClose(socket, 20_000)
      socket.write('GET /0 HTTP/1.1\r\nHost: x\r\n\r\n')
      await vi.waitFor(() => expect(parsed).toBe(1))
      // Several reads' worth: a read takes in up to 64 KiB, a few hundred of these requests.
      const behind = 3000
      const padding = `X-Padding: ${'p'.repeat(60)}\r\n`
      socket.write(
        Array.from({ length: behind }, (_, i) => `GET /${i + 1} HTTP/1.1\r\nHost: x\r\n${padding}\r\n`).join(
          '',
        ),
      )
      // The count settles where the server stops reading.
      let settled = -1
      await vi.waitFor(
        () => {
          const seen = parsed
          const same = seen === settled
          settled = seen
          expect(same).toBe(true)
        },
        { timeout: 10_000, interval: 300 },
      )
      expect(parsed).toBeGreaterThan(1)
      expect(parsed).toBeLessThan(behind / 2)
      // Released, the connection is read again, and held once more after each read.
      release()
      while (parsed < behind + 1 || queued.length > 0) {
        const next = queued.splice(0)
        releaseReading(connection as Socket)
        for (const respond of next) respond()
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      socket.end()
      const responses = parseResponses(await answers)
      expect(responses.map((r) => r.body)).toEqual(Array.from({ length: behind + 1 }, (_, i) => `/${i}`))
    } finally {
      socket.destroy()
      server.close()
    }
  }, 30_000)
})
