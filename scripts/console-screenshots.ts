// Takes the screenshots of docs/console.md: a real `plantstore serve` on a throwaway database, a few
// plants, a webhook subscription whose receiver fails, and each page of the console in Chromium.
//   npm run build && npx tsx scripts/console-screenshots.ts
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

const OUT = 'docs/console'
const dir = mkdtempSync(join(tmpdir(), 'plantstore-screens-'))
const tokenFile = join(dir, 'token')
const server = spawn(
  './bin/plantstore',
  [
    'serve',
    '--port',
    '0',
    '--database-url',
    `sqlite:${join(dir, 'p.db')}`,
    '--bootstrap-token-file',
    tokenFile,
    '--webhook-allow-private-urls',
    'true',
    '--webhook-retry-schedule',
    '1s',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
)
const base = await new Promise<string>((resolve) => {
  let out = ''
  server.stdout.on('data', (chunk) => {
    out += String(chunk)
    const match = /listening on (http:\/\/[^"\s]+)/.exec(out)
    if (match) resolve(match[1] as string)
  })
})
const token = readFileSync(tokenFile, 'utf8').trim()
const receiver = createServer((_request, response) => {
  response.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance until 14:00')
}).listen(0, '127.0.0.1')
await new Promise((resolve) => receiver.once('listening', resolve))
const receiverPort = (receiver.address() as { port: number }).port

const call = async (method: string, path: string, body?: string) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  })
  return response.text()
}
const hook = JSON.parse(
  await call(
    'POST',
    '/webhooks',
    JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hooks`, description: 'Inventory sync' }),
  ),
) as { id: string }
const plants = [
  ['9007199254740993', 'Monstera deliciosa', 'aroid'],
  ['2', 'Philodendron hederaceum', 'aroid'],
  ['3', 'Calathea orbifolia', 'prayer'],
  ['4', 'Ficus lyrata', 'fig'],
  ['5', 'Sansevieria trifasciata', 'succulent'],
]
for (const [id, name, tag] of plants)
  await call('POST', '/plants', `{"id": ${id}, "name": "${name}", "tag": "${tag}"}`)
await call('PATCH', '/plants/4', '{"name": "Ficus lyrata Bambino"}')

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--no-first-run',
  ],
})
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 720 } })
  await page.goto(`${base}/console`)
  await page.getByRole('textbox', { name: 'Token' }).fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('button', { name: 'Sign out' }).waitFor()
  mkdirSync(OUT, { recursive: true })
  const shot = async (hash: string, file: string, ready: () => Promise<unknown>) => {
    await page.goto(`${base}/console${hash}`)
    await ready()
    await page.waitForTimeout(500)
    await page.screenshot({ path: join(OUT, file), fullPage: true })
  }
  await shot('#/plants', 'plants.png', () => page.getByText('Monstera deliciosa').first().waitFor())
  await shot('#/tokens', 'tokens.png', () => page.getByText('bootstrap').first().waitFor())
  // Let the first attempts fail before the deliveries are shown.
  await page.waitForTimeout(3000)
  await shot(`#/webhooks/${hook.id}`, 'webhooks.png', () =>
    page.getByText('Inventory sync').first().waitFor(),
  )
  await page.goto(`${base}/console#/live`)
  await page.waitForTimeout(1500)
  await call('POST', '/plants', '{"id": 6, "name": "Pilea peperomioides", "tag": "pilea"}')
  await call('PUT', '/plants/3', '{"name": "Calathea orbifolia", "tag": "calathea"}')
  await call('DELETE', '/plants/5')
  await page.getByText('Pilea peperomioides').first().waitFor()
  await page.waitForTimeout(1000)
  await page.screenshot({ path: join(OUT, 'live.png'), fullPage: true })
} finally {
  await browser.close()
  receiver.close()
  server.kill('SIGTERM')
}
