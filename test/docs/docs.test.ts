import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENERATED_PAGES, renderPage } from '../../scripts/docs-tables.js'
import { SERVE_SETTINGS } from '../../src/config.js'
import { errors } from '../../src/errors.js'
import { makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { ROOT as REPOSITORY, startServer } from '../helpers/process.js'
import { sqliteKind, tempDir } from '../helpers/stores.js'

const ROOT = new URL('../../', import.meta.url)
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8')
const readme = read('README.md')
const pages = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

describe('the docs', () => {
  it('keep the README to a few screens', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250)
  })

  it.each(Object.keys(GENERATED_PAGES))(
    'carry in %s the tables the code generates (npm run docs)',
    (path) => {
      const text = read(path)
      expect(renderPage(path, text)).toBe(text)
    },
  )

  it('list every error code and every setting in the generated pages', () => {
    const errorPage = read('docs/errors.md')
    for (const e of Object.values(errors)) expect(errorPage).toContain(`| ${e.code} | ${e.status} |`)
    const configPage = read('docs/configuration.md')
    for (const s of SERVE_SETTINGS) expect(configPage).toContain(`| \`--${s.flag}\` |`)
  })

  it('link only to files and headings that exist', () => {
    const broken: string[] = []
    for (const page of pages) {
      const text = read(page).replace(/```[\s\S]*?```/g, '')
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target as string)) continue
        const [file, anchor] = (target as string).split('#') as [string, string | undefined]
        const linked =
          file === '' ? page : new URL(file, new URL(page, ROOT)).pathname.slice(ROOT.pathname.length)
        let linkedText: string
        try {
          linkedText = read(linked)
        } catch {
          broken.push(`${page}: ${target}`)
          continue
        }
        if (anchor !== undefined && !anchorsOf(linkedText).has(anchor)) broken.push(`${page}: ${target}`)
      }
    }
    expect(broken).toEqual([])
  })
})

/** The anchors GitHub gives a page's headings. */
function anchorsOf(markdown: string): Set<string> {
  const headings = markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)
  return new Set(
    [...headings].map(([, title]) =>
      (title as string)
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  )
}

interface Example {
  command: string
  shown: string[]
}

/** The curl examples of a code block, each with the output lines shown under it. */
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

/** The words of a shell command: bare, '…' or "…" (enough for the docs' curl lines). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '')
}

/** How the examples name the service: `$B/…` or the default address. */
const BASE = /^(?:\$B|http:\/\/127\.0\.0\.1:8080)\//

describe('the curl examples of the README and docs/api.md', () => {
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
    const examples = [
      [readme, '## Quick start'],
      [read('docs/api.md'), '## Examples'],
    ].flatMap(([text, heading]) => {
      const start = (text as string).indexOf(heading as string)
      expect(start, heading).toBeGreaterThan(-1)
      const block = (text as string).slice(
        (text as string).indexOf('```sh\n', start),
        (text as string).indexOf('\n```\n', start),
      )
      return curlExamples(block)
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

describe('the README quick start', () => {
  it('runs as written: the CLI issues a token, and the curl lines answer as shown', async () => {
    const start = readme.indexOf('```sh\n', readme.indexOf('## Quick start'))
    const lines = readme.slice(start + 6, readme.indexOf('\n```\n', start)).split('\n')
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    // On a free port rather than npm start's 8080, which another run may hold.
    const server = await startServer(['--database-url', databaseUrl])
    try {
      const script: string[] = []
      const shown: string[] = []
      for (let i = 0; i < lines.length; i++) {
        let line = lines[i] as string
        while (line.endsWith('\\')) line = `${line.slice(0, -1)} ${lines[++i]?.trim()}`
        if (line.startsWith('# ')) shown.push(line.slice(2))
        else if (line.startsWith('npm ')) continue
        else if (line.startsWith('curl '))
          script.push(`${line.replaceAll('http://127.0.0.1:8080', server.url)}; echo`)
        else script.push(line)
      }
      expect(script.some((line) => line.includes('./bin/plantstore token create'))).toBe(true)
      const output = await new Promise<string>((resolve, reject) => {
        execFile(
          'sh',
          ['-ec', script.join('\n')],
          { cwd: REPOSITORY, env: { ...process.env, DATABASE_URL: databaseUrl } },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        )
      })
      expect(output.trimEnd().split('\n')).toEqual(shown)
    } finally {
      await server.end()
    }
  })
})
