import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/**
 * --max-connections in a cluster worker. Node's own limit (server.maxConnections) has a full worker
 * refuse a connection the primary hands it, and the primary then hands it to another worker, and
 * back, for as long as every worker is full: the connection is never closed, and the processes spin
 * passing it around. Taken and closed here instead, it is closed at once, as in a single process.
 */
export function closeConnectionsPast(server: Server, max: number): void {
  let open = 0
  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      socket.destroy()
      return
    }
    open++
    socket.once('close', () => {
      open--
    })
  })
}
