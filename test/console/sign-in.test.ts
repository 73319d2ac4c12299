import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleServer,
  expectAccessible,
  expectNoFaults,
  noBrowser,
  openConsole,
  signedIn,
  signIn,
  startConsoleServer,
  useBrowser,
} from '../helpers/console.js'
import { AUDIENCE, ISSUER, type JwksServer, serveJwks, signingKey, signJwt } from '../helpers/jwks.js'
import { issueToken } from '../helpers/process.js'
import { sqliteKind } from '../helpers/stores.js'

const SECTIONS = ['Plants', 'Tokens', 'Webhooks', 'Live']

describe.skipIf(noBrowser())('signing in to the console', () => {
  const browser = useBrowser()
  let jwks: JwksServer
  let key: Awaited<ReturnType<typeof signingKey>>
  let service: ConsoleServer
  beforeAll(async () => {
    key = await signingKey('ES256', 'console-key')
    jwks = await serveJwks([key])
    service = await startConsoleServer(sqliteKind, [
      '--jwt-jwks-url',
      jwks.url,
      '--jwt-issuer',
      ISSUER,
      '--jwt-audience',
      AUDIENCE,
    ])
  }, 60_000)
  afterAll(async () => {
    await service?.server.end()
    await jwks?.close()
  })

  it('signs in with a pasted token, keeps it in this tab only, and forgets it on "Sign out"', async () => {
    const { page, faults } = await openConsole(browser(), service.url)
    await expectAccessible(page)
    await signIn(page, service.token)
    for (const name of SECTIONS)
      await expect(page.getByRole('link', { name }).isVisible()).resolves.toBe(true)
    await expect(page.getByRole('heading', { level: 1 })).toBeDefined()
    expect(page.url()).not.toContain(service.token)
    expect(await page.evaluate("sessionStorage.getItem('plantstore.token')")).toBe(service.token)
    expect(await page.evaluate('localStorage.length')).toBe(0)
    expect(await page.context().cookies()).toEqual([])

    // A reload keeps the session of the tab.
    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    await page.reload()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    expectNoFaults(faults)
    // The secret is what follows pst_<public id>_; the public id may be logged, the secret never.
    const secret = service.token.slice('pst_0123456789abcdef_'.length)
    expect(secret).toHaveLength(43)
    expect(service.server.output()).not.toContain(secret)
    await page.close()
  })

  it("says why a token is refused, in the service's words, and stays on the sign-in page", async () => {
    const { page } = await openConsole(browser(), service.url)
    await page.getByRole('textbox', { name: 'Token' }).fill(`${service.token.slice(0, -4)}AAAA`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/token/i)
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    await expectAccessible(page)
    await page.close()
  })

  it('signs in by keyboard alone: the Token box, then Enter', async () => {
    const { page } = await openConsole(browser(), service.url)
    await page.keyboard.press('Tab')
    await expect
      .poll(() => page.evaluate("document.activeElement?.getAttribute('id')"))
      .toBe(await page.getByRole('textbox', { name: 'Token' }).getAttribute('id'))
    await page.keyboard.type(service.token)
    await page.keyboard.press('Enter')
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.close()
  })

  it('signs in with a JWT, and names its subject', async () => {
    const jwt = await signJwt(key, { sub: 'ada', scope: 'plants:read events:read' })
    const { page } = await signedIn(browser(), service.url, jwt)
    await expect.poll(() => page.locator('header').textContent()).toContain('ada')
    await page.close()
  })

  it('offers a section only to a token with its scope, and says which scope is missing', async () => {
    const reader = await issueToken(service.databaseUrl, 'reader', 'plants:read')
    const { page } = await signedIn(browser(), service.url, reader)
    await page.getByRole('link', { name: 'Tokens' }).click()
    await expect.poll(() => page.locator('main').textContent()).toContain('tokens:manage')
    await page.getByRole('link', { name: 'Webhooks' }).click()
    await expect.poll(() => page.locator('main').textContent()).toContain('webhooks:manage')
    await expectAccessible(page)
    await page.close()
  })

  it('signs a person out, saying why, when their token is revoked meanwhile', async () => {
    const brief = await issueToken(service.databaseUrl, 'brief', 'plants:read')
    const { page } = await signedIn(browser(), service.url, brief)
    const id = brief.split('_')[1]
    const revoked = await fetch(`${service.url}/tokens/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${service.token}` },
    })
    expect(revoked.status).toBe(204)
    // Revocation reaches every instance within seconds; the next request after it is refused.
    await expect
      .poll(
        async () => {
          await page.reload()
          return page.getByRole('button', { name: 'Sign in' }).isVisible()
        },
        { timeout: 15_000, interval: 1000 },
      )
      .toBe(true)
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    await page.close()
  })

  it('fits a 375 px wide phone screen', async () => {
    const { page } = await signedIn(browser(), service.url, service.token, { phone: true })
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375)
    for (const name of SECTIONS)
      await expect(page.getByRole('link', { name }).isVisible()).resolves.toBe(true)
    await page.close()
  })
})
