import { describe, expect, it } from 'vitest'
import { FrameScanner } from './sse-frames.mjs'

const change = (cursor: number, name = 'Monstera') =>
  `id: ${cursor}\ndata: {"cursor":"${cursor}","type":"plant.created","after":{"id":${cursor * 7},"name":"${name}"}}\n\n`

/** A scanner whose marked frames are collected. */
function scanner() {
  const marked: Array<[number, number]> = []
  const scan = new FrameScanner('stream probe ', (tag, frames) => marked.push([tag, frames]))
  return { scan, marked }
}

// The stream readers count every change a stream delivers and time the probes' changes: a frame
// miscounted, or a probe missed, would be a change the figures say was lost or never arrived.
describe('the stream readers’ SSE frames', () => {
  it('counts the frames with an id, keeps the last id, and passes comments by', () => {
    const { scan, marked } = scanner()
    scan.push(Buffer.from(`: ok\n\n${change(1)}${change(2)}: heartbeat\n\n${change(3)}`))
    expect(scan.frames).toBe(3)
    expect(scan.lastId).toBe('3')
    expect(scan.unordered).toBe(0)
    expect(marked).toEqual([])
  })

  it('reads a frame cut anywhere by the end of a chunk, the blank line and the id line included', () => {
    const text = `${change(10)}${change(11, 'stream probe 0000042')}${change(12)}: heartbeat\n\n${change(13)}`
    // Every place a chunk could end, each byte a chunk of its own among them.
    for (let cut = 1; cut < text.length; cut++) {
      const { scan, marked } = scanner()
      scan.push(Buffer.from(text.slice(0, cut)))
      scan.push(Buffer.from(text.slice(cut)))
      expect([scan.frames, scan.lastId, scan.unordered, marked], `cut at ${cut}`).toEqual([
        4,
        '13',
        0,
        [[42, 2]],
      ])
    }
    const { scan, marked } = scanner()
    for (const byte of Buffer.from(text)) scan.push(Buffer.from([byte]))
    expect([scan.frames, scan.lastId, marked]).toEqual([4, '13', [[42, 2]]])
  })

  it('names each marked frame once, with the count of frames read up to it', () => {
    const { scan, marked } = scanner()
    scan.push(
      Buffer.from(
        change(1, 'stream probe 0000001') + change(2) + change(3, 'stream probe 0000002') + change(4),
      ),
    )
    scan.push(Buffer.from(change(5, 'stream probe 0000003')))
    expect(marked).toEqual([
      [1, 1],
      [2, 3],
      [3, 5],
    ])
    // The marker in a frame without an id (a comment) is no change.
    scan.push(Buffer.from(': stream probe 0000009\n\n'))
    expect(marked).toHaveLength(3)
  })

  it('counts a change read again or out of order, and does not compare ids that are not cursors', () => {
    const { scan } = scanner()
    scan.push(Buffer.from(change(5) + change(6) + change(6) + change(4) + change(7)))
    expect(scan.unordered).toBe(2)
    scan.push(Buffer.from('id: abc\ndata: {}\n\n'))
    expect([scan.frames, scan.unordered, scan.lastId]).toEqual([6, 2, 'abc'])
  })

  it('finds an id line that is not the first of its frame', () => {
    const { scan } = scanner()
    scan.push(Buffer.from('event: change\nid: 8\ndata: {}\n\nretry: 1000\n\n'))
    expect([scan.frames, scan.lastId]).toEqual([1, '8'])
  })

  it('forgets a cut frame when a new response starts the stream again', () => {
    const { scan } = scanner()
    scan.push(Buffer.from(change(1) + change(2).slice(0, 9)))
    scan.reset()
    scan.push(Buffer.from(change(2)))
    expect([scan.frames, scan.lastId, scan.unordered]).toEqual([2, '2', 0])
  })
})
