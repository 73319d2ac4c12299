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

/** Sends raw bytes on a new connection and returns the whole answer. */
export async function rawRequest(port: number, payload: string | Buffer, timeoutMs = 5000): Promise<string> {
  const socket = await openSocket(port)
  const answer = readUntilClose(socket, timeoutMs)
  socket.write(payload)
  return answer
}

/** The body of a raw HTTP/1.1 answer (assumes no chunked encoding). */
export function bodyOf(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4)
}
