import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

const CHROMIUM = '/usr/bin/chromium'

describe('the docs page in a browser', () => {
  let server: RunningServer
  let browser: Browser
  let token: string
  beforeAll(async () => {
    const dir = tempDir()
    const tokenFile = join(dir, 'token')
    server = await startServer(['--database-url', 'sqlite::memory:', '--bootstrap-token-file', tokenFile])
    token = readFileSync(tokenFile, 'utf8').trim()
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.stop()
  })

  it.each(['/docs?utm_source=mail', '/docs/?x=1#/plants/getPlant'])(
    'shows every operation when %s is opened with a query string',
    async (path) => {
      const page = await browser.newPage()
      await page.goto(`${server.url}${path}`)
      await expect
        .poll(() => page.locator('.opblock').count(), { timeout: 15_000 })
        .toBeGreaterThanOrEqual(19)
      if (path.includes('#'))
        await expect.poll(() => page.locator('#operations-plants-getPlant.is-open').count()).toBe(1)
      await page.close()
    },
  )

  it('creates a plant from the try-it panel of the create operation, with the token authorized there', async () => {
    const page = await browser.newPage()
    const offsite: string[] = []
    const refused: string[] = []
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) refused.push(message.text())
    })
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:'))
        offsite.push(request.url())
    })
    await page.goto(`${server.url}/docs`)

    await page.locator('button.authorize').first().click()
    // The stream's ticket is a scheme of its own, with a form of its own: the token goes in the bearer's.
    const bearer = page.locator('.modal-ux form', { hasText: 'bearerAuth' })
    await bearer.locator('input[type=text], input:not([type])').first().fill(token)
    await bearer.locator('.auth-btn-wrapper button.authorize').click()
    await page.locator('.modal-ux button.btn-done').first().click()

    const create = page.locator('#operations-plants-createPlant')
    await create.locator('.opblock-summary').click()
    await create.locator('button.try-out__btn').click()
    await create
      .locator('textarea.body-param__text')
      .fill('{"id": 9007199254740993, "name": "Docs fern", "tag": "fern"}')
    await create.locator('button.execute').click()
    const status = create.locator('.live-responses-table .response .response-col_status').first()
    await expect.poll(async () => (await status.textContent())?.trim(), { timeout: 15_000 }).toBe('200')

    const res = await fetch(`${server.url}/plants/9007199254740993`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('{"id":9007199254740993,"name":"Docs fern","tag":"fern"}')
    expect(offsite).toEqual([])
    expect(refused).toEqual([])
    await page.close()
  })

  it('shows the ids of every response digit for digit, a single plant and a list, from "Try it out"', async () => {
    const id = '9007199254740993'
    const created = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: `{"id": ${id}, "name": "Exact fern"}`,
    })
    // Created here, or already by the test above.
    expect([200, 409]).toContain(created.status)
    const page = await browser.newPage()
    const refused: string[] = []
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) refused.push(message.text())
    })
    await page.goto(`${server.url}/docs`)
    await page.locator('button.authorize').first().click()
    // The stream's ticket is a scheme of its own, with a form of its own: the token goes in the bearer's.
    const bearer = page.locator('.modal-ux form', { hasText: 'bearerAuth' })
    await bearer.locator('input[type=text], input:not([type])').first().fill(token)
    await bearer.locator('.auth-btn-wrapper button.authorize').click()
    await page.locator('.modal-ux button.btn-done').first().click()

    const responseOf = async (
      operation: string,
      fill?: (block: ReturnType<typeof page.locator>) => Promise<void>,
    ) => {
      const block = page.locator(`#operations-plants-${operation}`)
      await block.locator('.opblock-summary').click()
      await block.locator('button.try-out__btn').click()
      if (fill) await fill(block)
      await block.locator('button.execute').click()
      const body = block.locator('.live-responses-table .response-col_description .highlight-code').first()
      await expect.poll(async () => (await body.textContent()) ?? '', { timeout: 15_000 }).toContain('"id"')
      return (await body.textContent()) ?? ''
    }
    const single = await responseOf('getPlant', (block) =>
      block.locator('tr[data-param-name="id"] input').fill(id),
    )
    expect(single).toContain(`"id": ${id}`)
    expect(single).not.toContain('9007199254740992')
    const list = await responseOf('listPlants')
    expect(list).toContain(`"id": ${id}`)
    expect(list).not.toContain('9007199254740992')
    // Indented as Swagger UI indents JSON, the numbers left as sent.
    expect(list).toContain(`[\n  {\n    "id": ${id},\n    "name": "`)
    expect(refused).toEqual([])
    await page.close()
  }, 90_000)
})
