import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export interface Receiver {
  url: string
  port: number
  received: ReceivedRequest[]
  /**
   * How the next requests are answered: a status (with this body, none by default), or 'hang' to
   * keep them waiting until released.
   */
  respondWith(answer: number | 'hang', body?: string | Buffer): void
  /** Answers every request held by 'hang' with this status. */
  release(status?: number): void
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>
  close(): Promise<void>
}

/** A webhook receiver on 127.0.0.1 and a free port, recording every request. */
export async function startReceiver(port = 0): Promise<Receiver> {
  const received: ReceivedRequest[] = []
  const held: ServerResponse[] = []
  let answer: number | 'hang' = 200
  let answerBody: string | Buffer | undefined
  let waiters: Array<() => void> = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() })
      for (const w of waiters) w()
      if (answer === 'hang') held.push(res)
      else res.writeHead(answer).end(answerBody)
    })
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  const actual = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${actual}/hook`,
    port: actual,
    received,
    respondWith: (a, body) => {
      answer = a
      answerBody = body
    },
    release: (status = 200) => {
      for (const res of held.splice(0)) res.writeHead(status).end()
    },
    waitFor: (count, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return false
          clearTimeout(timer)
          waiters = waiters.filter((w) => w !== check)
          resolve(received)
          return true
        }
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== check)
          reject(new Error(`expected ${count} webhook requests, got ${received.length}`))
        }, timeoutMs)
        if (!check()) waiters.push(check)
      }),
    close: async () => {
      for (const res of held.splice(0)) res.destroy()
      server.closeAllConnections()
      server.close()
      await once(server, 'close').catch(() => {})
    },
  }
}
