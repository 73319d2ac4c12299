import { afterEach, describe, expect, it } from 'vitest'
import { openPostgres, type PostgresStore } from '../../src/store/postgres/index.js'
import type { WindowChange } from '../../src/store/types.js'
import { postgresKind, type StoreKind } from '../helpers/stores.js'

describe.skipIf(!postgresKind)('PostgreSQL rate-limit windows', () => {
  const open: PostgresStore[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()))
  })
  async function stores(count: number): Promise<PostgresStore[]> {
    const url = await (postgresKind as StoreKind).freshUrl()
    for (let i = 0; i < count; i++) open.push(await openPostgres({ url }))
    return open.slice(-count)
  }
  const window = (change: Partial<WindowChange>): WindowChange => ({
    key: 'token:a',
    windowMs: 60_000,
    start: 1_700_000_040_000,
    max: 50,
    overdraft: 0,
    requested: 0,
    ...change,
  })

  it('never grants more than the limit between instances settling at once', async () => {
    const [a, b] = (await stores(2)) as [PostgresStore, PostgresStore]
    const settlements = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).rateLimits.settle([
          window({ requested: 7 }),
          window({ key: 'address:10.0.0.1', requested: 3, max: 100 }),
        ]),
      ),
    )
    const granted = (key: number) =>
      settlements.reduce((sum, settlement) => sum + (settlement.grants[key]?.granted ?? 0), 0)
    expect(granted(0)).toBe(50)
    expect(granted(1)).toBe(60)
    // Each grant answers the change in its place.
    for (const settlement of settlements) {
      expect(settlement.grants[1]?.granted).toBe(3)
      expect(settlement.grants[0]?.granted).toBeLessThanOrEqual(7)
    }
  })

  it('takes back what is given back, counts overdrafts whatever the limit, and tells what is left', async () => {
    const [a, b] = (await stores(2)) as [PostgresStore, PostgresStore]
    expect((await a.rateLimits.settle([window({ requested: 40 })])).grants).toEqual([
      { granted: 40, unreserved: 10 },
    ])
    // Admitted before its first reservation: counted, though only 10 were left.
    expect((await b.rateLimits.settle([window({ overdraft: 15, requested: 5 })])).grants).toEqual([
      { granted: 0, unreserved: -5 },
    ])
    expect((await a.rateLimits.settle([window({ requested: -30 })])).grants).toEqual([
      { granted: -30, unreserved: 25 },
    ])
    expect((await b.rateLimits.settle([window({ requested: 30 })])).grants).toEqual([
      { granted: 25, unreserved: 0 },
    ])
    // Another window of the same key starts from nothing.
    const next = await a.rateLimits.settle([window({ start: 1_700_000_100_000, requested: 60 })])
    expect(next.grants).toEqual([{ granted: 50, unreserved: 0 }])
    expect(Math.abs(next.now - Date.now())).toBeLessThan(5000)
  })

  it('deletes windows that ended over a minute ago as it settles', async () => {
    const [store] = (await stores(1)) as [PostgresStore]
    const now = Date.now()
    await store.rateLimits.settle([
      window({ start: now - 10 * 60_000, requested: 1 }),
      window({ key: 'token:b', start: now - 10 * 60_000, requested: 1 }),
      window({ key: 'token:c', start: now - 60_000, requested: 1 }),
    ])
    await store.rateLimits.settle([window({ start: Math.floor(now / 60_000) * 60_000, requested: 1 })])
    const kept = await store.pool.query<{ key: string }>('SELECT key FROM rate_limit_windows ORDER BY key')
    // The window that ended under a minute ago and the current one are kept.
    expect(kept.rows.map((row) => row.key)).toEqual(['token:a', 'token:c'])
  })
})
