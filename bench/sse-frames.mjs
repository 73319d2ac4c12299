// Reads a Server-Sent Events stream as the service writes it (`id: <cursor>\ndata: <json>\n\n`, a
// comment `: …\n\n` as a heartbeat) with as little work per change as it can: a hundred streams read
// in one process receive every change a hundred times, and each change read is CPU the machine's
// other processes do not get. A frame is found by its blank line and its id line by its first bytes;
// the JSON is never parsed. Only a frame holding the marker text gets a closer look.

const BLANK_LINE = Buffer.from('\n\n')
const ID_LINE = Buffer.from('\nid:')
const EMPTY = Buffer.alloc(0)
const LF = 0x0a

/** Whether the frame at `at` begins with its id line. */
const idFirst = (buf, at) => buf[at] === 0x69 && buf[at + 1] === 0x64 && buf[at + 2] === 0x3a

/** The decimal number of the ASCII digits from `at` (at most 15); -1 when there are none. */
function digitsAt(buf, at) {
  let n = -1
  for (let i = at; i < at + 15; i++) {
    const digit = buf[i] - 0x30
    if (!(digit >= 0 && digit <= 9)) break
    n = (n === -1 ? 0 : n * 10) + digit
  }
  return n
}

export class FrameScanner {
  /** Frames with an id: the changes read. */
  frames = 0
  /**
   * Frames whose id was not above the one before: a change read twice or out of order. The service's
   * cursors are its seqs in decimal, so they compare as numbers; an id of another form is not compared.
   */
  unordered = 0
  /** The last id read, as sent: what a reader resumes from (Last-Event-ID). */
  lastId = undefined
  #tail = EMPTY
  #last = -1
  #marker
  #onMarked

  /**
   * `onMarked(tag, frames)` is called for a frame with an id that holds `marker`, with the number
   * written right after the marker and the count of frames read, that one included.
   */
  constructor(marker, onMarked) {
    this.#marker = Buffer.from(marker)
    this.#onMarked = onMarked
  }

  /** Reads a chunk of the response body; a frame cut by its end is read with the next chunk. */
  push(chunk) {
    const buf = this.#tail.length === 0 ? chunk : Buffer.concat([this.#tail, chunk])
    let at = 0
    // Where the next marker is: -2 not looked for yet, -1 none in the rest of the buffer.
    let mark = -2
    let idStart = -1
    let idEnd = -1
    for (;;) {
      const end = buf.indexOf(BLANK_LINE, at)
      if (end === -1) break
      let idLine = -1
      if (idFirst(buf, at)) idLine = at
      else {
        const found = buf.subarray(at, end).indexOf(ID_LINE)
        if (found !== -1) idLine = at + found + 1
      }
      if (idLine !== -1) {
        const start = buf[idLine + 3] === 0x20 ? idLine + 4 : idLine + 3
        let stop = buf.indexOf(LF, start)
        if (stop === -1 || stop > end) stop = end
        const id = stop - start <= 15 ? digitsAt(buf, start) : -1
        if (id !== -1 && String(id).length === stop - start) {
          if (id <= this.#last) this.unordered++
          this.#last = id
        }
        this.frames++
        idStart = start
        idEnd = stop
        if (mark === -2 || (mark >= 0 && mark < at)) mark = buf.indexOf(this.#marker, at)
        if (mark >= 0 && mark < end) this.#onMarked(digitsAt(buf, mark + this.#marker.length), this.frames)
      }
      at = end + 2
    }
    if (idStart !== -1) this.lastId = buf.toString('latin1', idStart, idEnd)
    this.#tail = at === buf.length ? EMPTY : buf.subarray(at)
  }

  /** Forgets a cut frame: a new response starts a new stream. */
  reset() {
    this.#tail = EMPTY
  }
}
