import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { closeConnectionsPast } from '../src/http/connection-limit.js'
import { openSocket, readUntilClose } from './helpers/raw-http.js'

const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

describe('closing connections past a limit (a cluster worker’s --max-connections)', () => {
  const servers: ReturnType<typeof createServer>[] = []
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections()
      server.close()
    }
  })

  it('closes a connection past the limit at once, and takes one again when an open one has closed', async () => {
    const server = createServer((_req, res) => res.end('ok'))
    servers.push(server)
    closeConnectionsPast(server, 2)
    // The server's side of each connection closes a moment after the client's: a new connection
    // counts on the one before it only once the server has seen it close.
    const closedOnServer: Promise<unknown>[] = []
    server.on('connection', (socket) => closedOnServer.push(once(socket, 'close')))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo

    const held = [await openSocket(port), await openSocket(port)]
    const past = await openSocket(port)
    past.write(REQUEST)
    // Closed without an answer, before the request could be read.
    expect(await readUntilClose(past)).toBe('')

    // Each connection counted is answered; once one has closed, a new one is taken in its place.
    const first = held[0]
    first?.write(REQUEST)
    expect(await readUntilClose(first as NonNullable<typeof first>)).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[\s\S]*ok$/,
    )
    await closedOnServer[0]
    const next = await openSocket(port)
    next.write(REQUEST)
    expect(await readUntilClose(next)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    held[1]?.destroy()
  })
})
