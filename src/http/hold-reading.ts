import type { Socket } from 'node:net'

// Node's HTTP server has no public way to stop reading a connection between requests: its parser
// resumes the socket after every request it completes (readStart in lib/_http_common.js), unless its
// own private flag (`socket._paused`) says otherwise. Only public calls are made here, timed to come
// after that resume; they depend on that order, which no documentation promises, and so sit in this
// one module, with a test (test/http/hold-reading.test.ts) that runs on every Node line the service
// supports.

/**
 * Stops reading `socket` once the bytes already read are parsed (a read takes in up to 64 KiB), for
 * as long as `stillHeld()` says so. Called from a 'request' listener: the parser's own resume comes
 * after it, in the same read, and is undone once that read is parsed.
 */
export function holdReading(socket: Socket, stillHeld: () => boolean): void {
  // The parser's resume schedules the socket's 'resume' as a next-tick; a microtask runs after
  // every next-tick queued so far.
  queueMicrotask(() => {
    if (stillHeld() && !socket.destroyed) socket.pause()
  })
}

/** Reads `socket` again; Node's own pause, while responses wait to be written, still holds. */
export function releaseReading(socket: Socket): void {
  socket.resume()
}
