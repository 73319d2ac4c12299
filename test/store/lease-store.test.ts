import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { storeKinds } from '../helpers/stores.js'

const TTL = 15_000

describe.each(storeKinds)('named leases on $name', (kind) => {
  let first: Store
  let second: Store
  const at = (offsetMs: number) => new Date(Date.UTC(2026, 10, 21, 12) + offsetMs)

  beforeEach(async () => {
    const url = await kind.freshUrl()
    const location = parseDatabaseUrl(url) ?? (undefined as never)
    // Two connections, as two processes would have (the second never waits for a lock itself).
    first = await openStore(location)
    second = await openStore(location, { busyTimeoutMs: 0 })
  })
  afterEach(async () => {
    await second.close()
    await first.close()
  })

  it('gives a free lease to exactly one of two holders asking at once, and keeps it theirs', async () => {
    const via = (holder: string) => (holder === 'one' ? first : second)
    for (const name of ['dispatch-a', 'dispatch-b', 'dispatch-c']) {
      const got = await Promise.all([
        first.leases.acquire(name, 'one', at(0), TTL),
        second.leases.acquire(name, 'two', at(0), TTL),
      ])
      expect(got.filter(Boolean)).toHaveLength(1)
      const [winner, loser] = got[0] ? ['one', 'two'] : ['two', 'one']
      // The other is refused while the lease runs, however often it asks.
      expect(await via(loser).leases.acquire(name, loser, at(1000), TTL)).toBe(false)
      // The holder's renewal moves the expiry on: past the first expiry it is still the holder's.
      expect(await via(winner).leases.acquire(name, winner, at(TTL - 1), TTL)).toBe(true)
      expect(await via(loser).leases.acquire(name, loser, at(TTL + 1), TTL)).toBe(false)
    }
  })

  it('hands an expired lease to the next holder, and the old holder cannot renew it back', async () => {
    expect(await first.leases.acquire('dispatch', 'crashed', at(0), TTL)).toBe(true)
    expect(await second.leases.acquire('dispatch', 'standby', at(TTL - 1), TTL)).toBe(false)
    expect(await second.leases.acquire('dispatch', 'standby', at(TTL), TTL)).toBe(true)
    expect(await first.leases.acquire('dispatch', 'crashed', at(TTL + 1), TTL)).toBe(false)
    expect(await second.leases.acquire('dispatch', 'standby', at(TTL + 2), TTL)).toBe(true)
  })

  it('hands a released lease over at once; a release by anyone else changes nothing', async () => {
    expect(await first.leases.acquire('dispatch', 'leaving', at(0), TTL)).toBe(true)
    await second.leases.release('dispatch', 'standby')
    expect(await second.leases.acquire('dispatch', 'standby', at(1), TTL)).toBe(false)
    await first.leases.release('dispatch', 'leaving')
    expect(await second.leases.acquire('dispatch', 'standby', at(2), TTL)).toBe(true)
    expect(await first.leases.acquire('dispatch', 'leaving', at(3), TTL)).toBe(false)
  })

  it('keeps leases of different names apart', async () => {
    expect(await first.leases.acquire('one duty', 'a', at(0), TTL)).toBe(true)
    expect(await second.leases.acquire('another duty', 'b', at(0), TTL)).toBe(true)
    await first.leases.release('another duty', 'a')
    expect(await first.leases.acquire('another duty', 'a', at(1), TTL)).toBe(false)
  })
})
