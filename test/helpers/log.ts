import { Writable } from 'node:stream'

/** A stream for a logger under test: every line written to it, as written. */
export function captureLines(): { lines: string[]; stream: Writable } {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { lines, stream }
}
