import { afterEach, describe, expect, it, vi } from 'vitest'
import { retryWhileBusy, retryWhileBusySync } from '../../src/store/sqlite/busy.js'

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })

describe('retryWhileBusy', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('tries again on the next two turns, then after 1 ms and every 2 ms', async () => {
    vi.useFakeTimers()
    const start = Date.now()
    const tries: number[] = []
    const done = retryWhileBusy(() => {
      tries.push(Date.now() - start)
      if (tries.length < 7) throw busy()
      return 'committed'
    }, 1000)
    await vi.runAllTimersAsync()
    expect(await done).toBe('committed')
    // A lock held for a few ms is retried within 2 ms of its release, never 8.
    expect(tries).toEqual([0, 0, 0, 1, 3, 5, 7])
  })

  it('gives up after the limit even when the wall clock steps back meanwhile', async () => {
    vi.useFakeTimers()
    let tries = 0
    const locked = retryWhileBusy(() => {
      // An NTP step or a resumed VM: the clock goes back an hour during the wait.
      if (++tries === 3) vi.setSystemTime(Date.now() - 3_600_000)
      throw busy()
    }, 20)
    let settled = false
    locked
      .catch(() => {})
      .finally(() => {
        settled = true
      })
    await vi.advanceTimersByTimeAsync(50)
    expect(settled).toBe(true)
    await expect(locked).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
  })

  it('gives up with the busy error after the limit, and never retries other errors', async () => {
    vi.useFakeTimers()
    let tries = 0
    const locked = retryWhileBusy(() => {
      tries++
      throw busy()
    }, 20)
    const failure = expect(locked).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
    await vi.runAllTimersAsync()
    await failure
    expect(tries).toBeGreaterThan(10)
    let other = 0
    await expect(
      retryWhileBusy(() => {
        other++
        throw new Error('no such table: plants')
      }),
    ).rejects.toThrow('no such table')
    expect(other).toBe(1)
  })

  it.each(['SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT'])(
    'waits out %s as it waits out a plain lock, and never a code that only starts alike',
    async (code) => {
      vi.useFakeTimers()
      let tries = 0
      const done = retryWhileBusy(() => {
        if (++tries < 3) throw Object.assign(new Error('database is locked'), { code })
        return 'committed'
      }, 1000)
      await vi.runAllTimersAsync()
      expect(await done).toBe('committed')
      expect(tries).toBe(3)
      let other = 0
      await expect(
        retryWhileBusy(() => {
          other++
          throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_BUSYNESS' })
        }),
      ).rejects.toThrow('disk I/O error')
      expect(other).toBe(1)
    },
  )
})

describe('retryWhileBusySync', () => {
  it('tries again every 2 ms or so until the lock is free, and never retries other errors', () => {
    let tries = 0
    const started = performance.now()
    expect(
      retryWhileBusySync(() => {
        if (++tries < 4) throw busy()
        return 'switched'
      }),
    ).toBe('switched')
    expect(tries).toBe(4)
    // Three pauses of 2 ms: the thread slept between tries rather than spinning through them.
    expect(performance.now() - started).toBeGreaterThanOrEqual(5)
    let other = 0
    expect(() =>
      retryWhileBusySync(() => {
        other++
        throw new Error('disk I/O error')
      }),
    ).toThrow('disk I/O error')
    expect(other).toBe(1)
  })

  it('gives up with the busy error after the limit', () => {
    let tries = 0
    const started = performance.now()
    expect(() =>
      retryWhileBusySync(() => {
        tries++
        throw busy()
      }, 30),
    ).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }))
    expect(performance.now() - started).toBeGreaterThanOrEqual(30)
    expect(tries).toBeGreaterThan(3)
  })
})
