import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import {
  expectAccessible,
  expectNoFaults,
  noBrowser,
  signedIn,
  useBrowser,
  useConsoleServer,
} from '../helpers/console.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'

interface Caller {
  name: string
  scopes: string[]
}

/** Who a secret speaks for, asked of the service itself: the status, and the caller when it is 200. */
async function me(url: string, secret: string): Promise<{ status: number; caller?: Caller }> {
  const response = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${secret}` } })
  return response.ok
    ? { status: response.status, caller: (await response.json()) as Caller }
    : { status: response.status }
}

/** Issues a token over HTTP, as the test's own setup (not through the page). */
async function issue(
  url: string,
  token: string,
  body: { name: string; scopes: string[]; expiresIn?: string },
): Promise<{ id: string; secret: string }> {
  const response = await fetch(`${url}/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(201)
  return (await response.json()) as { id: string; secret: string }
}

async function openTokens(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tokens' }).click()
  await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor()
}

/** The row of the token of that name in the list. */
const rowOf = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name })

/** Issues a token through the form, as a person does, and reads its secret from the box that shows it once. */
async function issueOnPage(page: Page, name: string, scopes: string[]): Promise<string> {
  const form = page.getByRole('form', { name: 'Issue a token' })
  await form.getByRole('textbox', { name: 'Name' }).fill(name)
  for (const scope of scopes) await form.getByRole('checkbox', { name: scope }).check()
  await form.getByRole('button', { name: 'Issue token' }).click()
  return secretShown(page, /shown once/)
}

async function secretShown(page: Page, title: RegExp): Promise<string> {
  const box = page.getByRole('region', { name: title })
  await box.waitFor()
  const secret = (await box.locator('code.secret').textContent()) ?? ''
  expect(secret).toMatch(/^pst_[0-9a-f]{16}_/)
  return secret
}

const textOf = async (page: Page, name: string) => (await rowOf(page, name).textContent()) ?? ''

describe.skipIf(noBrowser())('the Tokens page of the console', () => {
  const browser = useBrowser()

  describe.each(storeKinds)('on $name', (kind) => {
    const server = useConsoleServer(kind)

    it('issues a token with the scopes ticked, whose secret works with exactly those, and revokes it after a confirmation', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      await openTokens(page)
      const secret = await issueOnPage(page, 'ci reader', ['plants:read', 'events:read'])

      const issued = await me(server.url, secret)
      expect(issued).toEqual({ status: 200, caller: expect.objectContaining({ name: 'ci reader' }) })
      expect(issued.caller?.scopes).toEqual(['events:read', 'plants:read'])
      await expect.poll(() => textOf(page, 'ci reader'), { timeout: 10_000 }).toContain('Active')
      expect(await textOf(page, 'ci reader')).toContain(secret.slice(0, 'pst_0123456789abcdef_'.length))

      await rowOf(page, 'ci reader').getByRole('button', { name: 'Revoke' }).click()
      const confirm = page.getByRole('dialog', { name: /Revoke the token “ci reader”/ })
      await confirm.getByRole('button', { name: 'Revoke token' }).click()
      await expect.poll(() => textOf(page, 'ci reader'), { timeout: 10_000 }).toContain('Revoked')
      expect(await rowOf(page, 'ci reader').getByRole('button', { name: 'Revoke' }).count()).toBe(0)
      expect((await me(server.url, secret)).status).toBe(401)
      // The token that signed in is still signed in.
      expect((await me(server.url, server.token)).status).toBe(200)
      expectNoFaults(faults)
      await page.close()
    })
  })

  describe('on sqlite', () => {
    const server = useConsoleServer(sqliteKind)

    it('rolls a token with an overlap: the new secret is shown once and copied, and the old one works until the overlap ends', async () => {
      const old = await issue(server.url, server.token, { name: 'deploy bot', scopes: ['plants:read'] })
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'])
      await openTokens(page)
      await rowOf(page, 'deploy bot').getByRole('button', { name: 'Roll' }).click()
      const dialog = page.getByRole('dialog', { name: 'Roll “deploy bot”' })
      await dialog.waitFor()
      await expectAccessible(page)

      // An overlap the service refuses is said in the dialog, which stays open.
      await dialog.getByRole('textbox', { name: 'Overlap' }).fill('31d')
      await dialog.getByRole('button', { name: 'Roll token' }).click()
      await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('(40064)')
      expect((await me(server.url, old.secret)).status).toBe(200)

      await dialog.getByRole('textbox', { name: 'Overlap' }).fill('1h')
      const before = Date.now()
      await dialog.getByRole('button', { name: 'Roll token' }).click()
      const secret = await secretShown(page, /New secret “deploy bot”, shown once/)
      expect(secret).not.toBe(old.secret)
      expect(secret.startsWith(`pst_${old.id}_`)).toBe(true)
      expect(await dialog.isVisible()).toBe(false)
      const box = page.getByRole('region', { name: /shown once/ })
      expect(await box.textContent()).toContain('The previous secret keeps working until')

      expect((await me(server.url, secret)).status).toBe(200)
      expect((await me(server.url, old.secret)).status).toBe(200)
      const stored = (await (
        await fetch(`${server.url}/tokens/${old.id}`, {
          headers: { authorization: `Bearer ${server.token}` },
        })
      ).json()) as { previousSecretExpiresAt: string }
      const ends = Date.parse(stored.previousSecretExpiresAt)
      expect(ends).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000)
      expect(ends).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000)
      await expect
        .poll(() =>
          rowOf(page, 'deploy bot').locator(`time[datetime="${stored.previousSecretExpiresAt}"]`).count(),
        )
        .toBe(1)

      await expectAccessible(page)
      await box.getByRole('button', { name: 'Copy' }).click()
      await expect.poll(() => box.getByRole('status').textContent()).toBe('Copied.')
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret)

      await box.getByRole('button', { name: 'Dismiss' }).click()
      expect(await page.content()).not.toContain(secret)
      expectNoFaults(faults)
      await page.close()
    })

    it('keeps the secret out of the address, the storage and the console log, and forgets it when the person leaves the page', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      const logged: string[] = []
      page.on('console', (message) => logged.push(message.text()))
      await openTokens(page)
      await expectAccessible(page)
      const secret = await issueOnPage(page, 'kept once', ['plants:write'])
      expect((await me(server.url, secret)).caller?.scopes).toEqual(['plants:write'])
      await expectAccessible(page)

      expect(page.url()).not.toContain(secret)
      // The page's own globals, named in the page (this file is not compiled for the DOM).
      const stored = String(
        await page.evaluate(
          'JSON.stringify([{ ...sessionStorage }, { ...localStorage }, document.cookie, history.state])',
        ),
      )
      expect(stored).not.toContain(secret)
      // What is kept is the signed-in token alone.
      expect(stored).toContain(server.token)

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Plants' }).click()
      await openTokens(page)
      await expect.poll(() => textOf(page, 'kept once')).toContain('Active')
      expect(await page.getByRole('region', { name: /shown once/ }).count()).toBe(0)
      expect(await page.content()).not.toContain(secret)
      expect(logged.filter((line) => line.includes(secret))).toEqual([])

      // The confirmation of a revocation passes axe-core too, and backing out of it changes nothing.
      await rowOf(page, 'kept once').getByRole('button', { name: 'Revoke' }).click()
      const confirm = page.getByRole('dialog', { name: /Revoke the token “kept once”/ })
      await confirm.waitFor()
      await expectAccessible(page)
      await confirm.getByRole('button', { name: 'Cancel' }).click()
      expect(await confirm.isVisible()).toBe(false)
      expect((await me(server.url, secret)).status).toBe(200)
      expectNoFaults(faults)
      await page.close()
    })

    it('offers only the scopes the signed-in token holds, and shows what the service refuses', async () => {
      const limited = await issue(server.url, server.token, {
        name: 'limited manager',
        scopes: ['tokens:manage', 'plants:read'],
        expiresIn: '1h',
      })
      await issue(server.url, server.token, {
        name: 'wide bot',
        scopes: ['plants:read', 'plants:write'],
        expiresIn: '30m',
      })
      const { page, faults } = await signedIn(browser(), server.url, limited.secret)
      await openTokens(page)
      const form = page.getByRole('form', { name: 'Issue a token' })
      const offered = await form
        .getByRole('checkbox')
        .evaluateAll((boxes) => boxes.map((box) => box.parentElement?.querySelector('code')?.textContent))
      expect(offered).toEqual(['plants:read', 'tokens:manage'])

      // A lifetime past its own: 403, in the service's words.
      await form.getByRole('textbox', { name: 'Name' }).fill('outliver')
      await form.getByRole('checkbox', { name: 'plants:read' }).check()
      await form.getByRole('textbox', { name: 'Expires in' }).fill('30d')
      await form.getByRole('button', { name: 'Issue token' }).click()
      await expect.poll(() => form.getByRole('alert').textContent()).toContain('(40304)')
      expect(await page.getByRole('region', { name: /shown once/ }).count()).toBe(0)

      // Rolling a token that holds more than it: 403 too, said in the dialog.
      await rowOf(page, 'wide bot').getByRole('button', { name: 'Roll' }).click()
      const dialog = page.getByRole('dialog', { name: 'Roll “wide bot”' })
      await dialog.getByRole('button', { name: 'Roll token' }).click()
      await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('(40303)')
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      await expect.poll(() => dialog.count()).toBe(0)
      expectNoFaults(faults)
      await page.close()
    })

    it('tells a token without tokens:manage that it cannot manage tokens', async () => {
      const reader = await issue(server.url, server.token, { name: 'only a reader', scopes: ['plants:read'] })
      const { page, faults } = await signedIn(browser(), server.url, reader.secret)
      await openTokens(page)
      await expect
        .poll(() => page.getByRole('main').textContent())
        .toContain('Your token cannot manage tokens: it lacks the tokens:manage scope.')
      expect(await page.getByRole('button', { name: 'Issue token' }).count()).toBe(0)
      expectNoFaults(faults)
      await page.close()
    })

    it('works from the keyboard: the secret takes the focus, and the roll dialog opens with Enter and closes with Escape', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      const focused = async () => String(await page.evaluate('document.activeElement?.textContent'))
      await openTokens(page)
      const form = page.getByRole('form', { name: 'Issue a token' })
      await form.getByRole('textbox', { name: 'Name' }).focus()
      await page.keyboard.type('by keyboard')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Space')
      expect(await form.getByRole('checkbox', { name: 'metrics:read' }).isChecked()).toBe(true)
      // Enter in the name box sends the form.
      await page.keyboard.press('Shift+Tab')
      await page.keyboard.press('Shift+Tab')
      await page.keyboard.press('Enter')
      await secretShown(page, /shown once/)
      expect(await focused()).toMatch(/“by keyboard”, shown once/)

      await rowOf(page, 'by keyboard').getByRole('button', { name: 'Roll' }).focus()
      await page.keyboard.press('Enter')
      const dialog = page.getByRole('dialog', { name: 'Roll “by keyboard”' })
      await dialog.waitFor()
      expect(
        await dialog
          .getByRole('textbox', { name: 'Overlap' })
          .evaluate((box) => box === box.ownerDocument.activeElement),
      ).toBe(true)
      await page.keyboard.press('Escape')
      await expect.poll(() => dialog.count()).toBe(0)
      expect(await focused()).toBe('Roll')

      await page
        .getByRole('region', { name: /shown once/ })
        .getByRole('button', { name: 'Dismiss' })
        .click()
      expect(await focused()).toBe('All tokens')
      expectNoFaults(faults)
      await page.close()
    })

    it('fits a 375 px wide phone screen, the shown secret too', async () => {
      const { page, faults } = await signedIn(browser(), server.url, server.token, { phone: true })
      await openTokens(page)
      await expect.poll(() => page.getByRole('region', { name: 'Token list' }).count()).toBe(1)
      const width = async () => Number(await page.evaluate('document.documentElement.scrollWidth'))
      expect(await width()).toBeLessThanOrEqual(375)
      await issueOnPage(page, 'on a phone', ['plants:read'])
      expect(await width()).toBeLessThanOrEqual(375)
      expectNoFaults(faults)
      await page.close()
    })

    it('pages through the list with "Next page" and back', async () => {
      // The list holds 50 a page: the bootstrap token, those of the tests above, and enough more to
      // fill a second. Last in this block, as these push the other tests' tokens off the first page.
      for (let n = 1; n <= 50; n++)
        await issue(server.url, server.token, { name: `batch ${n}`, scopes: ['plants:read'] })
      const { page, faults } = await signedIn(browser(), server.url, server.token)
      await openTokens(page)
      await expect.poll(() => rowOf(page, 'batch 40').count()).toBe(1)
      expect(await rowOf(page, 'batch 50').count()).toBe(0)
      expect(await page.getByRole('button', { name: 'Previous page' }).count()).toBe(0)
      await page.getByRole('button', { name: 'Next page' }).click()
      await expect.poll(() => rowOf(page, 'batch 50').count()).toBe(1)
      expect(await rowOf(page, 'bootstrap').count()).toBe(0)
      expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0)
      await page.getByRole('button', { name: 'Previous page' }).click()
      await expect.poll(() => rowOf(page, 'bootstrap').count()).toBe(1)
      expectNoFaults(faults)
      await page.close()
    })
  })
})
