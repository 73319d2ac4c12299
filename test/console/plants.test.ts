import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
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

/** A request to the service with the server's token of every scope, the body written as given. */
function call(cs: ConsoleServer, path: string, method = 'GET', body?: string): Promise<Response> {
  return fetch(`${cs.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${cs.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body,
  })
}

/** Creates plants through the API, given as JSON text so that ids past 2^53 go digit for digit. */
async function seed(cs: ConsoleServer, plants: string[]): Promise<void> {
  const response = await call(cs, '/plants/batch', 'POST', `{"plants": [${plants.join(',')}]}`)
  expect(response.status).toBe(200)
}

/** The plant as the service has it now: its exact JSON, or the status when there is none. */
async function stored(cs: ConsoleServer, id: string): Promise<string | number> {
  const response = await call(cs, `/plants/${id}`)
  return response.ok ? await response.text() : response.status
}

const found = (page: Page) => page.getByRole('region', { name: 'Plants found' })
const column = (page: Page, n: number) => found(page).locator(`tbody tr td:nth-child(${n})`).allTextContents()
const total = (page: Page) => page.locator('.plant-total').textContent()

/** Runs a search from the list's form, as a person does: typed, then "Search". */
async function search(page: Page, fields: { q?: string; tag?: string; perPage?: string }) {
  const form = page.getByRole('search', { name: 'Find plants' })
  await form.getByRole('searchbox', { name: 'Search plants' }).fill(fields.q ?? '')
  await form.getByRole('textbox', { name: 'Tag', exact: true }).fill(fields.tag ?? '')
  if (fields.perPage) await form.getByRole('combobox', { name: 'Per page' }).selectOption(fields.perPage)
  await form.getByRole('button', { name: 'Search' }).click()
}

/** Opens a plant's page by its address, as a link or a bookmark does. */
async function openPlant(page: Page, id: string) {
  await page.evaluate(`location.hash = ${JSON.stringify(`#/plants/${id}`)}`)
  await page.getByRole('heading', { level: 1, name: `Plant ${id}`, exact: true }).waitFor()
  await page.locator('.plant-fields').first().waitFor()
}

describe.skipIf(noBrowser())('the Plants page of the console', () => {
  const browser = useBrowser()

  describe.each(storeKinds)('on $name', (kind) => {
    const cs = useConsoleServer(kind)
    beforeAll(async () => {
      await seed(cs, [
        '{"id": 1, "name": "Boston Fern", "tag": "fern"}',
        '{"id": 2, "name": "Monstera", "tag": "aroid"}',
        '{"id": 3, "name": "FERNLEAF", "tag": "outdoor"}',
        '{"id": 4, "name": "Philodendron", "tag": "aroid"}',
      ])
    }, 60_000)

    it('finds plants by a piece of their name, and by any of several tags', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await expect.poll(() => total(page)).toBe('4 plants')
      await search(page, { q: 'ern' })
      await expect.poll(() => column(page, 2)).toEqual(['Boston Fern', 'FERNLEAF'])
      await expect.poll(() => total(page)).toBe('2 plants')
      await search(page, { tag: 'fern, outdoor' })
      await expect.poll(() => column(page, 2)).toEqual(['Boston Fern', 'FERNLEAF'])
      // By keyboard: Enter in the search box runs the search.
      const box = page.getByRole('searchbox', { name: 'Search plants' })
      await box.fill('no such plant')
      await box.press('Enter')
      await page.getByText('No plant matches.').waitFor()
      expect(await total(page)).toBe('0 plants')
      expectNoFaults(faults)
      await page.close()
    })

    it('creates a plant, its id digit for digit, and shows the service’s refusal as it is', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      const form = page.getByRole('form', { name: 'New plant' })
      const create = async (id: string, name: string, tag: string) => {
        await form.getByRole('textbox', { name: 'Id', exact: true }).fill(id)
        await form.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
        await form.getByRole('textbox', { name: 'Tag', exact: true }).fill(tag)
        await form.getByRole('button', { name: 'Create plant' }).click()
      }
      await create('9007199254740995', 'Calathea', 'prayer')
      await form.getByRole('link', { name: 'plant 9007199254740995' }).waitFor()
      expect(await stored(cs, '9007199254740995')).toBe(
        '{"id":9007199254740995,"name":"Calathea","tag":"prayer"}',
      )
      // The list shows it once created.
      await expect.poll(() => column(page, 1)).toContain('9007199254740995')

      await create('9007199254740995', 'Another', '')
      await expect.poll(() => form.getByRole('alert').textContent()).toContain('already exists')
      // Not an integer: sent as the text it is, and the service says why it refuses it.
      await create('seven', 'Another', '')
      await expect.poll(() => form.getByRole('alert').textContent()).toContain('(40005)')
      expect(await stored(cs, '9007199254740995')).toBe(
        '{"id":9007199254740995,"name":"Calathea","tag":"prayer"}',
      )
      expectNoFaults(faults)
      await page.close()
    })

    it('shows a change made meanwhile as a conflict and never overwrites it; saves once on top of theirs', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await found(page).getByRole('link', { name: '2', exact: true }).click()
      await page.getByRole('heading', { level: 1, name: 'Plant 2', exact: true }).waitFor()
      const edit = page.getByRole('form', { name: 'Edit plant' })
      const name = edit.getByRole('textbox', { name: 'Name', exact: true })
      await expect.poll(() => name.inputValue()).toBe('Monstera')
      await name.fill('Mine')

      const theirs = await call(cs, '/plants/2', 'PUT', '{"name": "Theirs", "tag": "aroid"}')
      expect(theirs.status).toBe(200)
      await edit.getByRole('button', { name: 'Save' }).click()

      const conflict = page.getByRole('region', { name: 'Changed by someone else' })
      await conflict.waitFor()
      expect(await conflict.getByRole('alert').textContent()).toContain('not saved')
      expect(await conflict.textContent()).toContain('Theirs')
      expect(await conflict.textContent()).toContain('Mine')
      expect(await stored(cs, '2')).toBe('{"id":2,"name":"Theirs","tag":"aroid"}')
      await expectAccessible(page)

      await conflict.getByRole('button', { name: 'Take theirs and edit again' }).click()
      await expect.poll(() => name.inputValue()).toBe('Theirs')
      await name.fill('Theirs, repotted')
      await edit.getByRole('textbox', { name: 'Tag', exact: true }).fill('')
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
      expect(await stored(cs, '2')).toBe('{"id":2,"name":"Theirs, repotted"}')
      // The history shows the change, newest first, with who made it.
      const history = page.getByRole('region', { name: 'History, newest first' })
      await expect.poll(() => history.locator('tbody tr').count()).toBe(3)
      const newest = history.locator('tbody tr').first()
      expect(await newest.textContent()).toContain('Changed')
      expect(await newest.textContent()).toContain('Theirs, repotted')
      expect(await newest.textContent()).toContain('Token ')
      expectNoFaults(faults)
      await page.close()
    })

    it('deletes a plant after a confirmation, then shows the list with what was done', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await openPlant(page, '4')
      await page.getByRole('button', { name: 'Delete', exact: true }).click()
      const dialog = page.getByRole('dialog')
      await dialog.waitFor()
      // Backing out deletes nothing.
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      await dialog.waitFor({ state: 'hidden' })
      expect(await stored(cs, '4')).toBe('{"id":4,"name":"Philodendron","tag":"aroid"}')

      await page.getByRole('button', { name: 'Delete', exact: true }).click()
      await dialog.getByRole('button', { name: 'Delete', exact: true }).click()
      await page.getByRole('heading', { level: 1, name: 'Plants', exact: true }).waitFor()
      await page.getByRole('status').filter({ hasText: 'Plant 4 deleted.' }).waitFor()
      expect(await stored(cs, '4')).toBe(404)
      expectNoFaults(faults)
      await page.close()
    })
  })

  describe('on one store', () => {
    const EXACT = '9007199254740993'
    const cs = useConsoleServer(sqliteKind)
    beforeAll(async () => {
      const pots = Array.from({ length: 30 }, (_, i) => `{"id": ${101 + i}, "name": "Pot ${101 + i}"}`)
      await seed(cs, [...pots, `{"id": ${EXACT}, "name": "Exact fig", "tag": "ficus"}`])
    }, 60_000)

    it('shows an id past 2^53 digit for digit in the list, the plant’s page and its history', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await search(page, { q: 'exact' })
      const link = found(page).getByRole('link', { name: EXACT, exact: true })
      await link.waitFor()
      expect(await link.getAttribute('href')).toBe(`#/plants/${EXACT}`)
      await link.click()
      await page.getByRole('heading', { level: 1, name: `Plant ${EXACT}`, exact: true }).waitFor()
      expect(await page.locator('.plant-fields dd.id').textContent()).toBe(EXACT)

      await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Exact fig, pruned')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
      expect(await stored(cs, EXACT)).toBe(`{"id":${EXACT},"name":"Exact fig, pruned","tag":"ficus"}`)
      const history = page.getByRole('region', { name: 'History, newest first' })
      await expect.poll(() => history.locator('tbody tr').count()).toBe(2)
      expect(await history.locator('tbody td.id').allTextContents()).toEqual([EXACT, EXACT])
      expect(await history.locator('tbody tr td:nth-child(2)').allTextContents()).toEqual([
        'Changed',
        'Created',
      ])
      expectNoFaults(faults)
      await page.close()
    })

    it('shows the total and pages forward and back with the Link cursor', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await search(page, { q: 'Pot', perPage: '10' })
      await expect.poll(() => total(page)).toBe('30 plants')
      await expect.poll(() => column(page, 1)).toEqual(Array.from({ length: 10 }, (_, i) => String(101 + i)))
      const pages = page.getByRole('navigation', { name: 'Pages of plants' })
      const next = pages.getByRole('button', { name: 'Next page' })
      const previous = pages.getByRole('button', { name: 'Previous page' })
      expect(await previous.isDisabled()).toBe(true)
      await next.click()
      await expect.poll(() => column(page, 1)).toEqual(Array.from({ length: 10 }, (_, i) => String(111 + i)))
      await next.click()
      await expect.poll(() => column(page, 1)).toEqual(Array.from({ length: 10 }, (_, i) => String(121 + i)))
      // The page ends at the last plant: the service says so, and there is no next page.
      await expect.poll(() => next.isDisabled()).toBe(true)
      expect(await total(page)).toBe('30 plants')
      await previous.click()
      await expect.poll(() => column(page, 1)).toEqual(Array.from({ length: 10 }, (_, i) => String(111 + i)))
      // Another order starts again from its first page.
      await page.getByRole('combobox', { name: 'Sort' }).selectOption('-id')
      await page.getByRole('button', { name: 'Search' }).click()
      await expect.poll(() => column(page, 1)).toEqual(Array.from({ length: 10 }, (_, i) => String(130 - i)))
      expect(await previous.isDisabled()).toBe(true)
      expectNoFaults(faults)
      await page.close()
    })

    it('pages a long history with the Link cursor, newest first', async () => {
      for (let n = 1; n <= 21; n++)
        expect((await call(cs, '/plants/130', 'PUT', `{"name": "Pot 130, change ${n}"}`)).status).toBe(200)
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await openPlant(page, '130')
      const history = page.getByRole('region', { name: 'History, newest first' })
      const afterColumn = () => history.locator('tbody tr td:nth-child(6)').allTextContents()
      await expect.poll(() => history.locator('tbody tr').count()).toBe(20)
      expect((await afterColumn())[0]).toBe('Pot 130, change 21Tag: none')
      await page.getByRole('button', { name: 'Older changes' }).click()
      await expect.poll(() => history.locator('tbody tr').count()).toBe(22)
      const rows = await afterColumn()
      expect(rows[20]).toBe('Pot 130, change 1Tag: none')
      expect(rows[21]).toBe('Pot 130Tag: none')
      expect(await history.locator('tbody tr td:nth-child(2)').last().textContent()).toBe('Created')
      expect(await page.getByRole('button', { name: 'Older changes' }).count()).toBe(0)
      expectNoFaults(faults)
      await page.close()
    })

    it('offers no create, edit or delete to a token without plants:write, and says why', async () => {
      const issued = await call(cs, '/tokens', 'POST', '{"name": "reader", "scopes": ["plants:read"]}')
      expect(issued.status).toBe(201)
      const { secret } = (await issued.json()) as { secret: string }
      const { page, faults } = await signedIn(browser(), cs.url, secret)
      await expect.poll(() => total(page)).toBe('31 plants')
      expect(await page.getByRole('button', { name: 'Create plant' }).count()).toBe(0)
      expect(await page.locator('.not-allowed').textContent()).toContain('lacks the plants:write scope')
      await openPlant(page, '101')
      expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0)
      expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0)
      expect(await page.locator('.not-allowed').textContent()).toContain('lacks the plants:write scope')
      await page.getByRole('region', { name: 'History, newest first' }).waitFor()
      await expectAccessible(page)
      expectNoFaults(faults)
      await page.close()
    })

    it('has no serious accessibility fault on the list, a plant with its history, and the delete dialog', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token)
      await expect.poll(() => total(page)).toBe('31 plants')
      await expectAccessible(page)
      // A refusal shown in the create form.
      const form = page.getByRole('form', { name: 'New plant' })
      await form.getByRole('button', { name: 'Create plant' }).click()
      await form.getByRole('alert').waitFor()
      await expectAccessible(page)

      await openPlant(page, '102')
      await page.getByRole('region', { name: 'History, newest first' }).waitFor()
      await expectAccessible(page)
      await page.getByRole('button', { name: 'Delete', exact: true }).click()
      await page.getByRole('dialog').waitFor()
      await expectAccessible(page)
      // The dialog is left with Escape, by keyboard, and nothing is deleted.
      await page.keyboard.press('Escape')
      await page.getByRole('dialog').waitFor({ state: 'hidden' })
      expect(await stored(cs, '102')).toBe('{"id":102,"name":"Pot 102"}')
      expectNoFaults(faults)
      await page.close()
    })

    it('fits a 375 px wide phone screen, the tables scrolling inside their regions', async () => {
      const { page, faults } = await signedIn(browser(), cs.url, cs.token, { phone: true })
      const width = () => page.evaluate<number>('document.documentElement.scrollWidth')
      await expect.poll(() => total(page)).toBe('31 plants')
      expect(await width()).toBeLessThanOrEqual(375)
      await openPlant(page, EXACT)
      await page.getByRole('region', { name: 'History, newest first' }).waitFor()
      expect(await width()).toBeLessThanOrEqual(375)
      expectNoFaults(faults)
      await page.close()
    })
  })
})
