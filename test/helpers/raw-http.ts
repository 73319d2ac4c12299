import { connect, type Socket } from 'node:net'

/** Opens a raw TCP connection to the server, for requests no HTTP client would send. */
export async function openSocket(port: number): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  return socket
}

/** Collects everything the server sends until it closes the connection (or the time runs out). */
export function readUntilClose(socket: Socket, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    let data = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve(data)
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      data += chunk
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(data)
    })
    socket.on('error', () => {})
  })
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n'

/**
 * Resolves once the server answers `100 Continue` to a request sent with `Expect: 100-continue`: it
 * has read the request's headers and has it in flight, however long a busy machine took to get there.
 */
export function continued(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    let data = ''
    const read = (chunk: Buffer | string) => {
      data += chunk.toString()
      if (!data.startsWith(CONTINUE)) return
      socket.off('data', read)
      resolve()
    }
    socket.on('data', read)
  })
}

/** What follows the `100 Continue` the answer starts with. */
export function afterContinue(answer: string): string {
  if (!answer.startsWith(CONTINUE)) throw new Error(`no 100 Continue: ${answer.slice(0, 200)}`)
  return answer.slice(CONTINUE.length)
}

/** Sends raw bytes on a new connection and returns the whole answer. */
export async function rawRequest(port: number, payload: string | Buffer, timeoutMs = 5000): Promise<string> {
  const socket = await openSocket(port)
  const answer = readUntilClose(socket, timeoutMs)
  socket.write(payload)
  return answer
}

/**
 * Sends raw bytes on a new connection and resolves once a response head has come back (or the server
 * closed the connection), leaving the connection open for the caller to destroy: however long a busy
 * machine takes to answer, the connection is still held when the caller goes on.
 */
export async function heldRequest(
  port: number,
  payload: string,
): Promise<{ received: string; socket: Socket }> {
  const socket = await openSocket(port)
  let received = ''
  await new Promise<void>((resolve) => {
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      received += chunk
      if (received.includes('\r\n\r\n')) resolve()
    })
    socket.on('close', () => resolve())
    socket.on('error', () => {})
    socket.write(payload)
  })
  return { received, socket }
}

/** The body of a raw HTTP/1.1 answer (assumes no chunked encoding). */
export function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4)
}

export interface RawExchange {
  /** Everything the server sent before closing (or before the deadline). */
  received: string
  /** True when the server closed the connection; false when the deadline came first. */
  closed: boolean
}

/**
 * Writes `parts` to a fresh TCP connection, waiting `gapMs` between them, optionally half-closes, and
 * collects what comes back until the server closes the connection or `deadlineMs` passes.
 */
export function rawExchange(
  port: number,
  parts: Array<string | Buffer>,
  { gapMs = 0, end = false, deadlineMs = 5000 }: { gapMs?: number; end?: boolean; deadlineMs?: number } = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    const chunks: Buffer[] = []
    let settled = false
    const finish = (closed: boolean) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ received: Buffer.concat(chunks).toString('latin1'), closed })
    }
    const timer = setTimeout(() => finish(false), deadlineMs)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('close', () => finish(true))
    socket.on('error', () => finish(true))
    socket.on('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return
        socket.write(part)
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs))
      }
      if (end && !socket.destroyed) socket.end()
    })
  })
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Splits a byte stream of HTTP/1.1 responses (Content-Length framed, as this server sends them). */
export function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = []
  let rest = text
  while (rest.startsWith('HTTP/1.')) {
    const headEnd = rest.indexOf('\r\n\r\n')
    if (headEnd === -1) throw new Error(`incomplete response head: ${rest.slice(0, 200)}`)
    const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    const body = rest.slice(headEnd + 4, headEnd + 4 + length)
    responses.push({ status: Number(statusLine?.split(' ')[1]), headers, body })
    rest = rest.slice(headEnd + 4 + length)
  }
  if (rest.length > 0) throw new Error(`trailing bytes after responses: ${rest.slice(0, 200)}`)
  return responses
}
