import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { createLogger } from '../../src/log.js'
import { openStore } from '../../src/store/open.js'
import type { Store } from '../../src/store/types.js'
import { type DispatcherHandle, type DispatchSettings, startDispatcher } from '../../src/webhooks/runner.js'
import { createWebhook } from '../../src/webhooks/service.js'
import { waitUntil } from '../helpers/cluster.js'

// When a serving process starts its webhook dispatcher. `sqlite::memory:` runs it on the calling
// thread, so the start is visible here; the real processes are tested in test/process/webhooks.test.ts.

const POLL_MS = 10

const settings: DispatchSettings = {
  database: { kind: 'sqlite', path: ':memory:' },
  databasePoolSize: 10,
  databaseTimeoutMs: 5000,
  logLevel: 'warn',
  webhookAllowPrivateUrls: false,
  webhookRetryScheduleMs: [1000],
  webhookTimeoutMs: 1000,
  webhookDisableAfterMs: 60_000,
  webhookPollIntervalMs: POLL_MS,
  webhookMaxInFlight: 16,
  webhookLeaseTtlMs: 15_000,
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The same store, but its webhook store's hasWork answers with `hasWork`. */
function answeringHasWork(store: Store, hasWork: () => Promise<boolean>): Store {
  return { ...store, webhooks: Object.assign(Object.create(store.webhooks), { hasWork }) } as Store
}

describe('startDispatcher', () => {
  let store: Store
  let handle: DispatcherHandle | undefined
  const logs: string[] = []
  const logger = () => {
    const out = new PassThrough()
    out.on('data', (line: Buffer) => logs.push(line.toString()))
    return createLogger('warn', out)
  }
  const subscribe = () =>
    createWebhook(store.webhooks, {
      url: 'https://receiver.example/hook',
      events: ['plant.created'],
      description: null,
    })

  afterEach(async () => {
    await handle?.stop(100)
    handle = undefined
    logs.length = 0
    await store.close()
  })

  it('runs no dispatcher while there is no work, and starts one with the first subscription', async () => {
    store = await openStore(settings.database)
    handle = startDispatcher(store, settings, logger())
    // Twenty checks: a running dispatcher would have taken the free lease by now.
    await sleep(20 * POLL_MS)
    expect(handle.dispatching()).toBe(false)
    await subscribe()
    const running = handle
    await waitUntil(() => running.dispatching(), 5000)
  })

  it('starts at once when a commit of its own queued deliveries', async () => {
    store = await openStore(settings.database)
    handle = startDispatcher(store, { ...settings, webhookPollIntervalMs: 60_000 }, logger())
    await sleep(5 * POLL_MS)
    expect(handle.dispatching()).toBe(false)
    handle.eventsWritten()
    const running = handle
    await waitUntil(() => running.dispatching(), 5000)
  })

  it('warns once when checks fail, and asks again at each next one', async () => {
    store = await openStore(settings.database)
    let calls = 0
    const flaky = answeringHasWork(store, async () => {
      calls++
      if (calls <= 3) throw new Error('database is locked')
      return true
    })
    handle = startDispatcher(flaky, settings, logger())
    const running = handle
    await waitUntil(() => running.dispatching(), 5000)
    expect(calls).toBe(4)
    // Three failed checks in a row, one warning.
    expect(logs.join('').match(/could not check for webhook work/g)).toHaveLength(1)
  })

  it('starts nothing once stopped, even when a check in flight finds work', async () => {
    store = await openStore(settings.database)
    let answer: (work: boolean) => void = () => {}
    const slow = answeringHasWork(store, () => new Promise<boolean>((resolve) => (answer = resolve)))
    const stopped = startDispatcher(slow, settings, logger())
    await stopped.stop(100)
    answer(true)
    stopped.eventsWritten()
    await sleep(20 * POLL_MS)
    expect(stopped.dispatching()).toBe(false)
  })
})
