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

/** The JSON lines of a process's output (its log; any other line, as one on stderr, left out), parsed. */
export function logEntries<T extends { msg: string }>(output: string): T[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as T)
}
