import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { CONSOLE_DIR } from '../../src/http/routes/console.js'
import { errorOf, makeApp, type TestApp } from '../helpers/app.js'
import { sqliteKind, tempDir } from '../helpers/stores.js'

describe('the console served at /console', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
  })
  afterAll(() => t.close())

  it('serves its page without a token, under a policy that allows only its own scripts', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['cache-control']).toBe('no-cache')
    const policy = String(res.headers['content-security-policy'])
    expect(policy).toContain("script-src 'self'")
    expect(policy).not.toMatch(/script-src[^;]*unsafe/)
    expect(policy).toContain("connect-src 'self'")
    expect(policy).toContain("frame-ancestors 'none'")
    // No inline script: each script element loads a file of this origin.
    const scripts = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/src="\/console\/[a-z]+\.js"/)
      expect(content).toBe('')
    }
  })

  it('serves each file the page loads, revalidated by its ETag', async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/console' })).body
    const files = [...page.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1] as string)
    expect(files.sort()).toEqual(['/console/console.css', '/console/console.js'])
    for (const url of files) {
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toMatch(url.endsWith('.js') ? /javascript/ : /text\/css/)
      const etag = String(res.headers.etag)
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } })
      expect(again.statusCode).toBe(304)
      const head = await t.app.inject({ method: 'HEAD', url })
      expect([head.statusCode, head.body]).toEqual([200, ''])
    }
  })

  it('is under 200 KB gzipped, every file together', () => {
    const total = readdirSync(CONSOLE_DIR).reduce(
      (sum, name) => sum + gzipSync(readFileSync(join(CONSOLE_DIR, name))).length,
      0,
    )
    expect(total).toBeGreaterThan(0)
    expect(total).toBeLessThan(200 * 1024)
  })

  it('loads nothing from another origin', () => {
    const script = readFileSync(join(CONSOLE_DIR, 'console.js'), 'utf8')
    // Namespace names (SVG, MathML) are identifiers, not addresses the browser fetches.
    const addresses = [...script.matchAll(/https?:\/\/[^\s"'`)]+/g)].map((m) => m[0])
    expect(addresses.filter((a) => !a.startsWith('http://www.w3.org/'))).toEqual([])
  })

  it('answers 404 in the Error shape for a file it does not have, and 405 for another method', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/console/admin.php' })
    expect([missing.statusCode, errorOf(missing).error]).toEqual([404, errors.ROUTE_NOT_FOUND.code])
    for (const url of ['/console', '/console/console.js']) {
      const res = await t.app.inject({ method: 'POST', url })
      expect([res.statusCode, res.headers.allow]).toEqual([405, 'GET, HEAD'])
    }
  })

  it('sends /console/ to the page itself, where its files are found', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/console/' })
    expect([res.statusCode, res.headers.location]).toEqual([302, '/console'])
  })

  it('serves the API without the console when it was never built', async () => {
    const bare = await makeApp(sqliteKind, { consoleDir: tempDir() })
    try {
      const res = await bare.app.inject({ method: 'GET', url: '/console' })
      expect(res.statusCode).toBe(404)
      expect((await bare.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    } finally {
      await bare.close()
    }
  })
})
