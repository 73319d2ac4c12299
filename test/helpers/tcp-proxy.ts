import { once } from 'node:events'
import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy a test controls, placed between the service and its database so that a test can cut
 * the database off (and bring it back on the same port) without touching a server others share.
 */
export class TcpProxy {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private stalled = false
  port = 0

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts forwarding to the host and port of `databaseUrl`. */
  static async start(databaseUrl: string): Promise<TcpProxy> {
    const target = new URL(databaseUrl)
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432))
    await proxy.up()
    return proxy
  }

  /** The same URL, pointed at the proxy. */
  route(databaseUrl: string): string {
    const url = new URL(databaseUrl)
    url.hostname = '127.0.0.1'
    url.port = String(this.port)
    return url.toString()
  }

  /** Accepts connections again, on the port it had before. */
  async up(): Promise<void> {
    if (this.server) return
    this.stalled = false
    const server = createServer((client) => {
      if (this.stalled) {
        // Accepted, never answered: what a database behind a dead network link looks like.
        this.sockets.add(client)
        client.on('error', () => client.destroy())
        return
      }
      const upstream = connect(this.targetPort, this.targetHost)
      for (const socket of [client, upstream]) {
        this.sockets.add(socket)
        socket.on('close', () => this.sockets.delete(socket))
        socket.on('error', () => {
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.listen(this.port, '127.0.0.1')
    await once(server, 'listening')
    const address = server.address()
    if (address && typeof address === 'object') this.port = address.port
    this.server = server
  }

  /** The database "goes away": new connections are refused, open ones are reset. */
  async down(): Promise<void> {
    const server = this.server
    this.server = undefined
    const closed = server ? new Promise((resolve) => server.close(resolve)) : Promise.resolve()
    for (const socket of this.sockets) socket.resetAndDestroy()
    this.sockets.clear()
    await closed
  }

  /** The database stops answering without closing anything: bytes go nowhere, nothing comes back. */
  stall(): void {
    this.stalled = true
    for (const socket of this.sockets) {
      socket.unpipe()
      socket.pause()
    }
  }

  /**
   * The link comes back, but what was open during the stall stays dead, as after a firewall or NAT
   * dropped its state: new connections are forwarded, the stuck ones get nothing, not even a reset.
   */
  heal(): void {
    this.stalled = false
  }

  /** Ends a stall: the stuck connections are reset and new ones are forwarded again. */
  async resume(): Promise<void> {
    await this.down()
    await this.up()
  }

  close(): Promise<void> {
    return this.down()
  }
}
