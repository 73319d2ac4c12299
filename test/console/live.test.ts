import type { Browser, Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import {
  type ConsoleServer,
  expectAccessible,
  expectNoFaults,
  noBrowser,
  signedIn,
  useBrowser,
  useConsoleServer,
} from '../helpers/console.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

/** A request to the service with the token, the body sent as written (ids digit for digit). */
async function call(
  server: ConsoleServer,
  method: string,
  path: string,
  body?: string,
  { token = server.token, type = 'application/json' } = {},
): Promise<Response> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body,
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  return response
}

const create = (server: ConsoleServer, id: string, name: string) =>
  call(server, 'POST', '/plants', `{"id":${id},"name":${JSON.stringify(name)},"tag":"live"}`)
const rename = (server: ConsoleServer, id: string, name: string) =>
  call(server, 'PATCH', `/plants/${id}`, JSON.stringify({ name }), { type: 'application/merge-patch+json' })
const remove = (server: ConsoleServer, id: string) => call(server, 'DELETE', `/plants/${id}`)

/** A token of the scopes, issued over HTTP by the server's token of every scope. */
async function issue(server: ConsoleServer, scopes: string[]): Promise<{ id: string; secret: string }> {
  const response = await call(server, 'POST', '/tokens', JSON.stringify({ name: `live ${scopes}`, scopes }))
  return (await response.json()) as { id: string; secret: string }
}

const connection = (page: Page) => page.getByRole('status', { name: 'Connection' })
/** What of an element `shown` uses (the tests are type-checked without the DOM's types). */
interface ShownItem {
  cloneNode(deep: true): ShownItem
  querySelector(selector: string): { remove(): void } | null
  textContent: string | null
}

/**
 * The changes the page shows, newest first, each as its text without its time and author (the time is
 * written in the browser's own way).
 */
const shown = (page: Page): Promise<string[]> =>
  page
    .getByRole('log', { name: 'Changes' })
    .getByRole('listitem')
    .evaluateAll((items) =>
      (items as unknown as ShownItem[]).map((item) => {
        const copy = item.cloneNode(true)
        copy.querySelector('.live-meta')?.remove()
        return (copy.textContent ?? '').replace(/\s+/g, ' ').trim()
      }),
    )

async function openLive(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Live' }).click()
  await page.getByRole('heading', { name: 'Live' }).waitFor()
  await expect.poll(() => connection(page).textContent(), { timeout: 15_000 }).toContain('Connected')
}

const proxies: TcpProxy[] = []
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()))
})

/**
 * The Live page, signed in through a proxy the test can cut (a real drop of every connection
 * between the browser and the service), following the feed.
 */
async function openLiveViaProxy(browser: Browser, server: ConsoleServer) {
  const proxy = await TcpProxy.start(server.url)
  proxies.push(proxy)
  const opened = await signedIn(browser, proxy.route(server.url).replace(/\/$/, ''), server.token)
  await openLive(opened.page)
  return { proxy, ...opened }
}

/** Cuts every connection to the service, and waits for the page to say it is reconnecting. */
async function dropConnection(proxy: TcpProxy, page: Page): Promise<void> {
  await proxy.down()
  await expect.poll(() => connection(page).textContent(), { timeout: 10_000 }).toContain('Reconnecting…')
}

/** Open streams on the server, from its metrics. */
async function openStreams(server: ConsoleServer): Promise<number> {
  const text = await (await call(server, 'GET', '/metrics')).text()
  return Number(/^plantstore_event_streams (\d+)/m.exec(text)?.[1])
}

describe.skipIf(noBrowser())('the Live page', () => {
  const browser = useBrowser()

  describe.each(storeKinds)('on $name', (kind) => {
    const server = useConsoleServer(kind)

    it('shows each change as it is made, newest first, with its type, exact id, name, time and author', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      await openLive(page)
      expect(await shown(page)).toEqual([])
      await expect.poll(() => openStreams(server)).toBe(1)

      await create(server, '41', 'Live fern')
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual(['Created Live fern id 41'])
      await rename(server, '41', 'Live fern grown')
      await remove(server, '41')
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual([
          'Deleted Live fern grown id 41',
          'Updated Live fern grown id 41 (was Live fern)',
          'Created Live fern id 41',
        ])
      const tokenId = server.token.slice('pst_'.length, 'pst_'.length + 16)
      const log = page.getByRole('log', { name: 'Changes' })
      for (const text of await log.getByRole('listitem').allTextContents())
        expect(text).toContain(`by token ${tokenId}`)
      expect(await log.getByRole('link', { name: 'Live fern grown' }).first().getAttribute('href')).toBe(
        '#/plants/41',
      )
      expect(await log.locator('time').first().getAttribute('datetime')).toMatch(/^\d{4}-\d\d-\d\dT/)

      // Leaving the page closes its stream.
      await page.getByRole('link', { name: 'Plants' }).click()
      await expect.poll(() => openStreams(server), { timeout: 10_000 }).toBe(0)
      expectNoFaults(faults)
      await page.close()
    })
  })

  describe('on SQLite', () => {
    const server = useConsoleServer(sqliteKind)

    it('resumes after a dropped connection with no change lost or shown twice', async () => {
      const { proxy, page, faults } = await openLiveViaProxy(browser(), server)
      await create(server, '51', 'Before the drop')
      await expect.poll(async () => (await shown(page)).length, { timeout: 10_000 }).toBe(1)

      await dropConnection(proxy, page)
      await create(server, '52', 'During the drop')
      await rename(server, '51', 'Renamed during the drop')
      await create(server, '53', 'Also during the drop')
      await remove(server, '52')
      await proxy.up()

      await expect.poll(() => connection(page).textContent(), { timeout: 20_000 }).toContain('Connected')
      // A change made after the reconnection comes after everything missed, and after nothing twice.
      await create(server, '54', 'After the drop')
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual([
          'Created After the drop id 54',
          'Deleted During the drop id 52',
          'Created Also during the drop id 53',
          'Updated Renamed during the drop id 51 (was Before the drop)',
          'Created During the drop id 52',
          'Created Before the drop id 51',
        ])
      expectNoFaults(faults)
      await page.close()
    })

    it('says that changes may be missing when the connection dropped before a first change came', async () => {
      const { proxy, page, faults } = await openLiveViaProxy(browser(), server)
      expect(await connection(page).textContent()).not.toContain('may be missing')
      await dropConnection(proxy, page)
      await create(server, '71', 'Made with no cursor to resume after')
      await proxy.up()
      await expect.poll(() => connection(page).textContent(), { timeout: 20_000 }).toContain('Connected')
      expect(await connection(page).textContent()).toContain(
        'Changes made while the connection was down may be missing',
      )
      await create(server, '72', 'Made after')
      await expect.poll(() => shown(page), { timeout: 10_000 }).toEqual(['Created Made after id 72'])
      expectNoFaults(faults)
      await page.close()
    })

    it('shows an id past 2^53 digit for digit, pauses, resumes and clears, and has no serious axe violation', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      await openLive(page)
      await expectAccessible(page)
      await create(server, '9007199254740993', 'Exact fern')
      const log = page.getByRole('log', { name: 'Changes' })
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual(['Created Exact fern id 9007199254740993'])
      expect(await log.getByRole('link', { name: 'Exact fern' }).getAttribute('href')).toBe(
        '#/plants/9007199254740993',
      )
      await expectAccessible(page)

      await page.getByRole('button', { name: 'Pause' }).click()
      await rename(server, '9007199254740993', 'Exact fern, paused')
      await expect
        .poll(() => page.getByRole('status').filter({ hasText: 'Paused' }).textContent(), { timeout: 10_000 })
        .toBe('Paused: 1 new change is held until you resume.')
      expect(await shown(page)).toEqual(['Created Exact fern id 9007199254740993'])
      await expectAccessible(page)
      await page.getByRole('button', { name: 'Resume' }).click()
      expect(await shown(page)).toEqual([
        'Updated Exact fern, paused id 9007199254740993 (was Exact fern)',
        'Created Exact fern id 9007199254740993',
      ])

      await page.getByRole('button', { name: 'Clear' }).click()
      expect(await shown(page)).toEqual([])
      await page.getByText('No change shown yet').waitFor()
      await remove(server, '9007199254740993')
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual(['Deleted Exact fern, paused id 9007199254740993'])
      expectNoFaults(faults)
      await page.close()
    })

    it('says when the changes after the last one shown are past retention, and follows from now on request', async () => {
      const { proxy, page, faults } = await openLiveViaProxy(browser(), server)
      await create(server, '61', 'Kept a moment')
      await expect.poll(async () => (await shown(page)).length, { timeout: 10_000 }).toBe(1)
      await dropConnection(proxy, page)
      await create(server, '62', 'Swept away')
      // Retention deletes every change so far: the page's cursor is now below what is kept.
      const location = parseDatabaseUrl(server.databaseUrl)
      if (!location) throw new Error(`bad database url ${server.databaseUrl}`)
      const store = await openStore(location)
      try {
        await store.maintenance.sweep({
          now: new Date(),
          eventsBefore: new Date(Date.now() + 60_000),
          tokensBefore: new Date(0),
        })
      } finally {
        await store.close()
      }
      await proxy.up()
      await expect.poll(() => connection(page).textContent(), { timeout: 20_000 }).toContain('Disconnected')
      expect(await connection(page).textContent()).toContain('no longer kept by the service')
      await expectAccessible(page)

      await page.getByRole('button', { name: 'Follow from now' }).click()
      await expect.poll(() => connection(page).textContent(), { timeout: 10_000 }).toContain('Connected')
      await create(server, '63', 'After starting again')
      await expect
        .poll(async () => await shown(page), { timeout: 10_000 })
        .toEqual(['Created After starting again id 63', 'Created Kept a moment id 61'])
      expectNoFaults(faults)
      await page.close()
    })

    it('fits a 375 px wide phone screen', async () => {
      const { page } = await signedIn(browser(), server.url, server.token, { phone: true })
      await openLive(page)
      await create(server, '9223372036854775807', 'Phlebodium aureum blue star fern, the widest name here')
      await expect.poll(async () => (await shown(page)).length, { timeout: 10_000 }).toBe(1)
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375)
      await expectAccessible(page)
      await page.close()
    })

    it('tells a token without events:read that it cannot follow the feed', async () => {
      const reader = await issue(server, ['plants:read'])
      const { page, faults } = await signedIn(browser(), server.url, reader.secret)
      await page.getByRole('link', { name: 'Live' }).click()
      await page.getByRole('heading', { name: 'Live' }).waitFor()
      await page.getByText('Your token cannot follow the change feed').waitFor()
      expect(await page.getByRole('log', { name: 'Changes' }).count()).toBe(0)
      await expect.poll(() => openStreams(server), { timeout: 10_000 }).toBe(0)
      await expectAccessible(page)
      expectNoFaults(faults)
      await page.close()
    })

    it('signs out, saying why, when the token is revoked while the page follows the feed', async () => {
      const follower = await issue(server, ['events:read'])
      const { page } = await signedIn(browser(), server.url, follower.secret)
      await page.getByRole('heading', { name: 'Live' }).waitFor()
      await expect.poll(() => connection(page).textContent(), { timeout: 15_000 }).toContain('Connected')
      await call(server, 'DELETE', `/tokens/${follower.id}`)
      // The stream ends within the revocation bound; the new ticket is then refused with a 401.
      await page.getByText('Your token no longer works').waitFor({ timeout: 20_000 })
      await page.getByRole('textbox', { name: 'Token' }).waitFor()
      await page.close()
    })
  })
})
