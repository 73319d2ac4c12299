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
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
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
    await page.locator('.modal-ux input[type=text], .modal-ux input:not([type])').first().fill(token)
    await page.locator('.modal-ux .auth-btn-wrapper button.authorize').click()
    await page.locator('.modal-ux button.btn-done').click()

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
})
