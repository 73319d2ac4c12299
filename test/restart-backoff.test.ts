import { describe, expect, it } from 'vitest'
import { RestartBackoff } from '../src/restart-backoff.js'

describe('RestartBackoff', () => {
  it('doubles the wait with each short run in a row, up to its most', () => {
    const backoff = new RestartBackoff(100, 1000, 30_000)
    expect([10, 10, 10, 10, 10, 10].map((ran) => backoff.after(ran))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ])
  })

  it('starts again at once after a run as long as the stable time, and from the first wait after that', () => {
    const backoff = new RestartBackoff(100, 1000, 30_000)
    expect([10, 10, 30_000, 29_999, 10].map((ran) => backoff.after(ran))).toEqual([100, 200, 0, 100, 200])
  })
})
