import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderReadme } from '../../scripts/docs-tables.js'
import { makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { sqliteKind } from '../helpers/stores.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

describe('README', () => {
  it('carries the current configuration and error tables (npm run docs regenerates them)', () => {
    expect(renderReadme(readme)).toBe(readme)
  })
})

interface Example {
  command: string
  shown: string[]
}

/** The curl examples of a README code block, each with the output lines shown under it. */
function curlExamples(block: string): Example[] {
  const examples: Example[] = []
  const lines = block.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]?.startsWith('curl ')) continue
    let command = lines[i] as string
    while (command.endsWith('\\')) command = `${command.slice(0, -1)} ${lines[++i]?.trim()}`
    const shown: string[] = []
    while (lines[i + 1]?.startsWith('# ')) shown.push((lines[++i] as string).slice(2))
    examples.push({ command, shown })
  }
  return examples
}

/** The words of a shell command: bare, '…' or "…" (enough for the README's curl lines). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '')
}

/** How the examples name the service: `$B/…` or the default address. */
const BASE = /^(?:\$B|http:\/\/127\.0\.0\.1:8080)\//

describe('the README endpoint examples', () => {
  let t: TestApp
  let token: string
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
    token = await t.token()
    // The listing example shows a plant the examples do not create, and a next page.
    for (const body of [
      '{"id": 3, "name": "Philodendron", "tag": "aroid"}',
      '{"id": 12, "name": "Anthurium", "tag": "aroid"}',
    ]) {
      expect((await postPlant(t.app, token, body)).statusCode).toBe(200)
    }
  })
  afterAll(() => t.close())

  it('answer as shown, ETag values and all, run in order after the quick start', async () => {
    const examples = ['## Quick start', 'Examples, with `TOKEN`'].flatMap((heading) => {
      const start = readme.indexOf(heading)
      return curlExamples(readme.slice(readme.indexOf('```sh\n', start), readme.indexOf('\n```\n', start)))
    })
    expect(examples.length).toBeGreaterThanOrEqual(9)
    for (const { command, shown } of examples) {
      const args = words(command)
      let method = 'GET'
      let url = ''
      let payload: string | undefined
      let withHeaders = false
      let statusOnly = false
      const headers: Record<string, string> = {}
      for (let i = 1; i < args.length; i++) {
        const arg = args[i] as string
        if (arg === '-X') method = args[++i] as string
        else if (arg === '-H') {
          const header = (args[++i] as string).replace('$TOKEN', token)
          const colon = header.indexOf(':')
          headers[header.slice(0, colon).toLowerCase()] = header.slice(colon + 1).trim()
        } else if (arg === '-d') payload = args[++i]
        else if (arg === '-si') withHeaders = true
        else if (arg === '-w') statusOnly = (args[++i] as string).startsWith('%{http_code}')
        else if (arg === '-o') i++
        else if (BASE.test(arg)) url = arg.replace(BASE, '/')
      }
      const response = await t.app.inject({ method: method as 'GET', url, headers, payload })
      for (const line of shown) {
        const header = /^([A-Za-z-]+): (.*)$/.exec(line)
        if (statusOnly) expect(String(response.statusCode), command).toBe(line)
        else if (withHeaders && header) {
          expect(response.headers[(header[1] as string).toLowerCase()], command).toBe(header[2])
        } else expect(response.body, command).toBe(line)
      }
    }
  })
})
