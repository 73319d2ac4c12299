import { createHmac } from 'node:crypto'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ConsoleServer,
  expectAccessible,
  expectNoFaults,
  noBrowser,
  signedIn,
  useBrowser,
  useConsoleServer,
} from '../helpers/console.js'
import { issueToken } from '../helpers/process.js'
import { type ReceivedRequest, type Receiver, startReceiver } from '../helpers/receiver.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'

/** Receivers on 127.0.0.1, and a retry schedule short enough that a failing delivery ends in a moment. */
const SERVE_ARGS = ['--webhook-allow-private-urls', 'true', '--webhook-retry-schedule', '200ms']
const WAIT = { timeout: 15_000 }

type Json = Record<string, unknown> & { data?: Array<Record<string, unknown>> }

/** The API as the service's token holder, beside the page: to make events and to check what the page did. */
function apiOf(service: ConsoleServer) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Json }
  }
}

const typeOf = (request: ReceivedRequest): string => (JSON.parse(request.body) as { type: string }).type

/** Whether the Standard Webhooks signature header holds one made with this secret. */
function signedWith(request: ReceivedRequest, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`
  const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`
  return String(request.headers['webhook-signature']).split(' ').includes(expected)
}

async function openWebhooks(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Webhooks' }).click()
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor()
}

/** Creates a subscription through the page's form; the secret it shows once. */
async function createInPage(page: Page, url: string, description: string): Promise<string> {
  await page.getByRole('button', { name: 'New subscription' }).click()
  await page.getByRole('textbox', { name: 'URL' }).fill(url)
  await page.getByRole('textbox', { name: 'Description' }).fill(description)
  await page.getByRole('button', { name: 'Create subscription' }).click()
  const secret = page.getByRole('region', { name: 'Signing secret of the new subscription' }).locator('code')
  await secret.waitFor(WAIT)
  return (await secret.textContent()) ?? ''
}

describe.skipIf(noBrowser())('the webhooks console', () => {
  const browser = useBrowser()

  describe.each(storeKinds)('on $name', (kind) => {
    const service = useConsoleServer(kind, SERVE_ARGS)
    let receiver: Receiver
    beforeAll(async () => {
      receiver = await startReceiver()
    }, 60_000)
    afterAll(async () => {
      await receiver?.close()
    })

    it('follows a failing delivery to its attempts, retries it, and sees it succeed', async () => {
      const api = apiOf(service)
      receiver.respondWith(500, 'receiver down: try again later')
      const { page, faults } = await signedIn(browser(), service.url, service.token)
      await openWebhooks(page)
      expect(await createInPage(page, receiver.url, 'Orders CRM')).toMatch(/^whsec_/)
      const [webhook] = (await api('GET', '/webhooks')).body.data ?? []
      expect(webhook).toMatchObject({ url: receiver.url, description: 'Orders CRM', disabled: false })
      const id = String(webhook?.id)
      const row = page.locator('tr', { hasText: receiver.url })
      await row.waitFor(WAIT)
      expect(await row.textContent()).toContain('Enabled')

      expect((await api('POST', '/plants', { id: 1, name: 'Monstera' })).status).toBe(200)
      const [delivery] = (await api('GET', `/webhooks/${id}/deliveries`)).body.data ?? []
      const deliveryId = String(delivery?.id)
      // The first attempt and its one retry, both answered 500: the delivery ends failed.
      await receiver.waitFor(2)

      await page.getByRole('link', { name: receiver.url }).click()
      await page.getByRole('heading', { level: 1, name: 'Webhook subscription' }).waitFor()
      const deliveryRow = page.locator('tr', { hasText: deliveryId })
      await expect
        .poll(async () => (await deliveryRow.count()) > 0 && (await deliveryRow.textContent()), WAIT)
        .toContain('Failed')
      expect(await deliveryRow.textContent()).toContain('plant.created')

      await page.getByRole('link', { name: deliveryId }).click()
      await page.getByRole('heading', { level: 1, name: 'Delivery' }).waitFor()
      await expect.poll(() => page.locator('.delivery-status').textContent(), WAIT).toBe('Failed')
      const attempts = page.locator('ol.attempts > li')
      await expect.poll(() => attempts.count(), WAIT).toBe(2)
      expect(await attempts.first().textContent()).toContain('500')
      expect(await attempts.first().locator('pre').textContent()).toBe('receiver down: try again later')

      receiver.respondWith(200, 'thanks')
      await page.getByRole('button', { name: 'Retry' }).click()
      await expect.poll(() => page.locator('.delivery-status').textContent(), WAIT).toBe('Succeeded')
      await expect.poll(() => attempts.count(), WAIT).toBe(3)
      expect(await attempts.first().textContent()).toContain('200')
      expect(await attempts.first().locator('pre').textContent()).toBe('thanks')

      const received = await receiver.waitFor(3)
      expect(received[2]?.headers['webhook-id']).toBe(delivery?.eventId)
      const after = (await api('GET', `/webhooks/${id}/deliveries`)).body.data ?? []
      expect(after[0]).toMatchObject({ id: deliveryId, status: 'succeeded', lastStatusCode: 200 })
      expectNoFaults(faults)
      await page.close()
    }, 60_000)
  })

  describe('on SQLite', () => {
    const service = useConsoleServer(sqliteKind, SERVE_ARGS)
    let receiver: Receiver
    let page: Page
    let faults: Awaited<ReturnType<typeof signedIn>>['faults']
    let id: string
    let firstSecret: string
    beforeAll(async () => {
      receiver = await startReceiver()
      ;({ page, faults } = await signedIn(browser(), service.url, service.token))
    }, 60_000)
    afterAll(async () => {
      await page?.close()
      await receiver?.close()
    })

    it('lists, creates with the secret shown once, and shows a refusal', async () => {
      const api = apiOf(service)
      await openWebhooks(page)
      await page.getByText('No subscriptions yet.').waitFor(WAIT)
      await expectAccessible(page)

      await page.getByRole('button', { name: 'New subscription' }).click()
      await page.getByRole('form', { name: 'New subscription' }).waitFor()
      await expectAccessible(page)
      // The browser takes it as a URL; the service only http and https.
      await page.getByRole('textbox', { name: 'URL' }).fill('ftp://example.com/hook')
      await page.getByRole('button', { name: 'Create subscription' }).click()
      await page.getByRole('alert').waitFor(WAIT)
      expect(await page.getByRole('alert').textContent()).toMatch(/\(400\d\d\)$/)
      expect((await api('GET', '/webhooks')).body.data).toEqual([])
      await page.getByRole('button', { name: 'New subscription' }).click()

      firstSecret = await createInPage(page, receiver.url, 'Greenhouse sensors')
      expect(firstSecret).toMatch(/^whsec_/)
      await page.getByRole('button', { name: 'Copy secret' }).waitFor()
      await expectAccessible(page)
      const [webhook] = (await api('GET', '/webhooks')).body.data ?? []
      id = String(webhook?.id)
      expect(webhook).toMatchObject({ url: receiver.url, description: 'Greenhouse sensors' })
      const row = page.locator('tr', { hasText: 'Greenhouse sensors' })
      await row.waitFor(WAIT)
      expect(await row.textContent()).toContain('Enabled')
    })

    it('edits the description, disables and enables, rotates the secret and sends a test', async () => {
      const api = apiOf(service)
      await page.getByRole('link', { name: receiver.url }).click()
      await page.getByRole('heading', { level: 1, name: 'Webhook subscription' }).waitFor()
      await page.getByRole('button', { name: 'Save' }).waitFor(WAIT)
      await expectAccessible(page)

      const edit = page.getByRole('form', { name: 'Edit' })
      await edit.getByRole('textbox', { name: 'Description' }).fill('Greenhouse sensors, north wing')
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.getByText('Saved.').waitFor(WAIT)
      expect((await api('GET', `/webhooks/${id}`)).body.description).toBe('Greenhouse sensors, north wing')

      await page.getByRole('button', { name: 'Disable' }).click()
      await page.getByRole('button', { name: 'Enable' }).waitFor(WAIT)
      expect(await page.locator('.webhook-summary').textContent()).toContain('Disabled')
      expect((await api('GET', `/webhooks/${id}`)).body).toMatchObject({
        disabled: true,
        disabledReason: 'manual',
      })
      await page.getByRole('button', { name: 'Enable' }).click()
      await page.getByRole('button', { name: 'Disable' }).waitFor(WAIT)
      expect((await api('GET', `/webhooks/${id}`)).body.disabled).toBe(false)

      await page.getByRole('button', { name: 'Rotate secret' }).click()
      const dialog = page.getByRole('dialog')
      await dialog.waitFor()
      await expectAccessible(page)
      await dialog.getByRole('button', { name: 'Rotate' }).click()
      const shown = page.getByRole('region', { name: 'New signing secret' }).locator('code')
      await shown.waitFor(WAIT)
      const secret = (await shown.textContent()) ?? ''
      expect(secret).toMatch(/^whsec_/)
      expect(secret).not.toBe(firstSecret)
      expect((await api('GET', `/webhooks/${id}`)).body.previousSecretExpiresAt).not.toBeNull()

      await page.getByRole('button', { name: 'Send test' }).click()
      await page.getByText(/Test message queued as delivery dlv_/).waitFor(WAIT)
      const [test] = await receiver.waitFor(1)
      expect(typeOf(test as ReceivedRequest)).toBe('webhook.test')
      // The secret shown is the one that signs now (the replaced one signs beside it for a while).
      expect(signedWith(test as ReceivedRequest, secret)).toBe(true)
      expect(signedWith(test as ReceivedRequest, firstSecret)).toBe(true)

      // Shown once: a page opened again does not have it.
      await page.reload()
      await page.getByRole('button', { name: 'Send test' }).waitFor(WAIT)
      expect(await page.getByText(secret).count()).toBe(0)
      expectNoFaults(faults)
    })

    it('replays and recovers since a time, and shows the deliveries and their attempts', async () => {
      const api = apiOf(service)
      const created = await fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
        body: '{"id": 9007199254740993, "name": "Fern"}',
      })
      expect(created.status).toBe(200)
      const first = (await receiver.waitFor(2))[1] as ReceivedRequest
      expect(typeOf(first)).toBe('plant.created')

      const replay = page.getByRole('form', { name: 'Replay' })
      await replay.getByLabel('Since').fill('2000-01-01T00:00')
      await replay.getByRole('button', { name: 'Replay' }).click()
      await replay.getByText('Replay: 1 delivery queued.').waitFor(WAIT)
      const again = (await receiver.waitFor(3))[2] as ReceivedRequest
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id'])
      expect(again.body).toContain('9007199254740993')

      const recover = page.getByRole('form', { name: 'Recover' })
      await recover.getByLabel('Since').fill('2000-01-01T00:00')
      await recover.getByRole('button', { name: 'Recover' }).click()
      await recover.getByText('Recover: 0 deliveries queued.').waitFor(WAIT)

      // The deliveries: the test message and the plant's, both succeeded once the replay is done.
      const rows = page.locator('section[aria-label="Deliveries"] tbody tr')
      await expect
        .poll(async () => (await rows.allTextContents()).join('|'), WAIT)
        .toMatch(/Succeeded.*Succeeded/)
      await page.getByRole('combobox', { name: 'Status' }).selectOption('failed')
      await page.getByText('No failed deliveries.').waitFor(WAIT)
      await page.getByRole('combobox', { name: 'Status' }).selectOption('succeeded')
      await expect.poll(() => rows.count(), WAIT).toBe(2)
      await expectAccessible(page)

      const [plantDelivery] = ((await api('GET', `/webhooks/${id}/deliveries`)).body.data ?? []).filter(
        (d) => d.eventType === 'plant.created',
      )
      await page.getByRole('link', { name: String(plantDelivery?.id) }).click()
      await page.getByRole('heading', { level: 1, name: 'Delivery' }).waitFor()
      const attempts = page.locator('ol.attempts > li')
      await expect.poll(() => attempts.count(), WAIT).toBe(2)
      expect(await attempts.first().textContent()).toContain('200')
      await expectAccessible(page)
      expectNoFaults(faults)
    })

    it('deletes a subscription after asking', async () => {
      const api = apiOf(service)
      await page.getByRole('link', { name: 'Back to the subscription' }).click()
      // By keyboard: Enter asks, Escape backs out.
      await page.getByRole('button', { name: 'Delete' }).focus()
      await page.keyboard.press('Enter')
      const dialog = page.getByRole('dialog')
      await dialog.waitFor()
      expect(await dialog.textContent()).toContain(receiver.url)
      await expectAccessible(page)
      await page.keyboard.press('Escape')
      await dialog.waitFor({ state: 'hidden' })
      await page.getByRole('button', { name: 'Delete' }).click()
      await dialog.getByRole('button', { name: 'Cancel' }).click()
      expect((await api('GET', `/webhooks/${id}`)).status).toBe(200)

      await page.getByRole('button', { name: 'Delete' }).click()
      await dialog.getByRole('button', { name: 'Delete' }).click()
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor(WAIT)
      await page.getByText(`Deleted the subscription to ${receiver.url}.`).waitFor()
      expect((await api('GET', `/webhooks/${id}`)).status).toBe(404)
      expectNoFaults(faults)
    })

    it('pages through the deliveries, older and newer', async () => {
      const api = apiOf(service)
      const webhook = await api('POST', '/webhooks', { url: receiver.url, description: 'Paged' })
      const hookId = String(webhook.body.id)
      for (let n = 100; n < 122; n++)
        expect((await api('POST', '/plants', { id: n, name: `Plant ${n}` })).status).toBe(200)
      const all = ((await api('GET', `/webhooks/${hookId}/deliveries?limit=500`)).body.data ?? []).map((d) =>
        String(d.id),
      )
      expect(all).toHaveLength(22)

      await page.goto(`${service.url}/console#/webhooks/${hookId}`)
      const links = page.locator('section[aria-label="Deliveries"] tbody tr a')
      await expect.poll(() => links.count(), WAIT).toBe(20)
      const first = await links.allTextContents()
      expect(await page.getByRole('button', { name: 'Newer deliveries' }).isDisabled()).toBe(true)
      await page.getByRole('button', { name: 'Older deliveries' }).click()
      await expect.poll(() => links.count(), WAIT).toBe(2)
      const second = await links.allTextContents()
      expect([...first, ...second]).toEqual(all)
      expect(await page.getByRole('button', { name: 'Older deliveries' }).isDisabled()).toBe(true)
      await page.getByRole('button', { name: 'Newer deliveries' }).click()
      await expect.poll(() => links.allTextContents(), WAIT).toEqual(first)
      expectNoFaults(faults)
    })

    it('shows the network error of an attempt that got no response', async () => {
      const api = apiOf(service)
      // Port 1 on the loopback: nothing listens, so the connection is refused.
      const webhook = await api('POST', '/webhooks', {
        url: 'http://127.0.0.1:1/hook',
        description: 'Nobody home',
      })
      const hookId = String(webhook.body.id)
      const test = await api('POST', `/webhooks/${hookId}/test`)
      await page.goto(`${service.url}/console#/webhooks/${hookId}/deliveries/${String(test.body.id)}`)
      await expect.poll(() => page.locator('.delivery-status').textContent(), WAIT).toBe('Failed')
      const attempts = page.locator('ol.attempts > li')
      await expect.poll(() => attempts.count(), WAIT).toBe(2)
      expect(await attempts.first().textContent()).toContain('ECONNREFUSED')
      expect(await attempts.first().textContent()).toContain('No response came.')
      expectNoFaults(faults)
    })

    it('fits a 375 px phone screen', async () => {
      const api = apiOf(service)
      const webhook = await api('POST', '/webhooks', {
        url: `${receiver.url}/a/rather/long/path/that/goes/on/and/on/for/a/while/to/test/wrapping`,
        description: 'A subscription whose description is long enough to wrap on a narrow screen',
      })
      const hookId = String(webhook.body.id)
      const test = await api('POST', `/webhooks/${hookId}/test`)
      const phone = await signedIn(browser(), service.url, service.token, { phone: true })
      const fits = () => phone.page.evaluate<number>('document.documentElement.scrollWidth')
      const deliveryId = String(test.body.id)
      // Each view, once what it loads is shown.
      for (const [hash, shown] of [
        ['#/webhooks', 'tr:has-text("narrow screen")'],
        [`#/webhooks/${hookId}`, `tr:has-text("${deliveryId}")`],
        [`#/webhooks/${hookId}/deliveries/${deliveryId}`, 'ol.attempts > li'],
      ] as const) {
        await phone.page.goto(`${service.url}/console${hash}`)
        await phone.page.locator(shown).first().waitFor(WAIT)
        expect(await fits(), hash).toBeLessThanOrEqual(375)
      }
      expectNoFaults(phone.faults)
      await phone.page.close()
    })

    it('says so to a token without webhooks:manage', async () => {
      const reader = await issueToken(service.databaseUrl, 'reader', 'plants:read')
      const other = await signedIn(browser(), service.url, reader)
      await other.page.getByRole('link', { name: 'Webhooks' }).click()
      await other.page.getByText('Your token cannot manage webhooks').waitFor(WAIT)
      await other.page.close()
    })
  })
})
