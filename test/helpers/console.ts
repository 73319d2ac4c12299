import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { type RunningServer, startServer } from './process.js'
import { lacking } from './requirement.js'
import { type StoreKind, tempDir } from './stores.js'

/** Debian's Chromium: the one browser these tests drive. */
export const CHROMIUM = '/usr/bin/chromium'

/** Whether the browser tests must be skipped here (outside CI only: under CI=true they fail instead). */
export const noBrowser = (): boolean => lacking(existsSync(CHROMIUM), `${CHROMIUM} is not installed`)

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The closed network refuses the browser's own background connections: it makes none.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  })
}

/** One browser for the tests of a file (or a describe block): launched before them, closed after. */
export function useBrowser(): () => Browser {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launchBrowser()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
  })
  return () => {
    if (browser === undefined) throw new Error('the browser is launched before the tests')
    return browser
  }
}

/** A real `plantstore serve` on a fresh database of the kind, with a bootstrap token of every scope. */
export interface ConsoleServer {
  server: RunningServer
  url: string
  databaseUrl: string
  /** Holds every scope. */
  token: string
}

export async function startConsoleServer(kind: StoreKind, args: string[] = []): Promise<ConsoleServer> {
  const databaseUrl = await kind.freshUrl()
  const tokenFile = join(tempDir(), 'token')
  const server = await startServer([
    '--database-url',
    databaseUrl,
    '--bootstrap-token-file',
    tokenFile,
    '--max-event-loop-delay',
    'off',
    ...args,
  ])
  return { server, url: server.url, databaseUrl, token: readFileSync(tokenFile, 'utf8').trim() }
}

/**
 * A console server for the tests of a describe block: started before them, ended after. The object
 * returned is filled in once the server has started, so the tests read it as they would a constant.
 */
export function useConsoleServer(kind: StoreKind, args: string[] = []): ConsoleServer {
  const started = {} as ConsoleServer
  beforeAll(async () => {
    Object.assign(started, await startConsoleServer(kind, args))
  }, 60_000)
  afterAll(async () => {
    await started.server?.end()
  })
  return started
}

/** What a page did that it must not: a refusal by its Content-Security-Policy, a request elsewhere, a script error. */
export interface PageFaults {
  refused: string[]
  offsite: string[]
  errors: string[]
}

/** Opens the console in a new page (375 px wide when `phone`), watching it for faults. */
export async function openConsole(
  browser: Browser,
  url: string,
  { phone = false }: { phone?: boolean } = {},
): Promise<{ page: Page; faults: PageFaults }> {
  const page = await browser.newPage(phone ? { viewport: { width: 375, height: 740 } } : {})
  const faults: PageFaults = { refused: [], offsite: [], errors: [] }
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) faults.refused.push(message.text())
  })
  page.on('pageerror', (error) => faults.errors.push(error.message))
  page.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:'))
      faults.offsite.push(request.url())
  })
  await page.goto(`${url}/console`)
  return { page, faults }
}

/** Signs in with the token, as a person does: pasted into the "Token" box, then "Sign in". */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Token' }).fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
}

/** Opens the console and signs in: the page shows the first section the token may use. */
export async function signedIn(
  browser: Browser,
  url: string,
  token: string,
  options: { phone?: boolean } = {},
): Promise<{ page: Page; faults: PageFaults }> {
  const opened = await openConsole(browser, url, options)
  await signIn(opened.page, token)
  return opened
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<{ target: unknown[] }>
}

/**
 * The serious and critical axe-core violations on the page as it is now. axe runs in the page through
 * page.evaluate, which the page's Content-Security-Policy does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: () => Promise<{ violations: unknown[] }> } }).axe
    return (await axe.run()).violations
  })
  return (violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** Fails with the violations when the page has a serious or critical one. */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([])
}

/** Fails when the page was refused something by its policy, asked another origin, or threw. */
export function expectNoFaults(faults: PageFaults): void {
  expect(faults).toEqual({ refused: [], offsite: [], errors: [] })
}
