import { once } from 'node:events'
import { type AddressInfo, createServer, type Socket } from 'node:net'

/**
 * What a raw receiver does with a request, at its first bytes: `ok` reads it and answers 200 keeping
 * the connection open (without a `Keep-Alive: timeout` hint), `close` closes the connection,
 * `reset` resets it, `partial` sends the start of a status line and closes, `hang` never answers.
 */
export type RawAnswer = 'ok' | 'close' | 'reset' | 'partial' | 'hang'

export interface RawReceiver {
  url: string
  port: number
  /** Connections accepted so far. */
  readonly connections: number
  /** The `webhook-id` of each request answered 200, in order. */
  answered: string[]
  close(): Promise<void>
}

/**
 * A webhook receiver on 127.0.0.1 speaking HTTP/1.1 by hand, so that it can drop a kept-alive
 * connection at the exact moment the next request on it begins. `plan` is asked at the first bytes
 * of each request, with the connection's number and the request's number on it (both from 1).
 */
export async function startRawReceiver(
  plan: (connection: number, request: number) => RawAnswer,
): Promise<RawReceiver> {
  const answered: string[] = []
  const sockets = new Set<Socket>()
  let connections = 0
  const server = createServer((socket) => {
    const connection = ++connections
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    let requests = 0
    let current: RawAnswer | undefined
    let buffered = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      if (current === undefined) {
        requests += 1
        current = plan(connection, requests)
        if (current === 'close') socket.destroy()
        else if (current === 'reset') socket.resetAndDestroy()
        else if (current === 'partial') socket.end('HTTP/1.1 20')
      }
      if (current !== 'ok') return
      buffered = Buffer.concat([buffered, chunk])
      const headEnd = buffered.indexOf('\r\n\r\n')
      if (headEnd < 0) return
      const head = buffered.subarray(0, headEnd).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (buffered.length < headEnd + 4 + length) return
      buffered = buffered.subarray(headEnd + 4 + length)
      answered.push(/\r\nwebhook-id: *([^\r]*)/i.exec(head)?.[1] ?? '')
      current = undefined
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    get connections() {
      return connections
    },
    answered,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      server.close()
      await once(server, 'close').catch(() => {})
    },
  }
}
