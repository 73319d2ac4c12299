// docs/configuration.md and docs/errors.md carry tables generated from the code's own tables, so the
// pages cannot drift from what the service does. `npm run docs` rewrites them in place; a test fails
// when a committed page differs from what this writes.
import { readFileSync, writeFileSync } from 'node:fs'
import { envName, SERVE_SETTINGS } from '../src/config.js'
import { errors } from '../src/errors.js'

export function configTable(): string {
  const rows = SERVE_SETTINGS.map(
    (s) =>
      `| \`--${s.flag}\` | \`${envName(s.flag)}\` | ${s.default === undefined ? '—' : `\`${s.default}\``} | ${s.description} |`,
  )
  return ['| flag | env | default | meaning |', '|---|---|---|---|', ...rows].join('\n')
}

export function errorTable(): string {
  const rows = Object.entries(errors).map(
    ([name, e]) => `| ${e.code} | ${e.status} | \`${name}\` | ${e.message} |`,
  )
  return ['| error | status | name | default message |', '|---|---|---|---|', ...rows].join('\n')
}

/** Each generated page, by its path from the repository root, with the tables it carries. */
export const GENERATED_PAGES: Record<string, Record<string, () => string>> = {
  'docs/configuration.md': { 'config-table': configTable },
  'docs/errors.md': { 'error-table': errorTable },
}

/** A page's text with every table it carries replaced by its current content. */
export function renderPage(path: string, text: string): string {
  const tables = GENERATED_PAGES[path]
  if (tables === undefined) throw new Error(`${path} is not a generated page`)
  let rendered = text
  for (const [name, render] of Object.entries(tables)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`)
    if (!pattern.test(rendered)) throw new Error(`${path} lacks the ${name} markers`)
    rendered = rendered.replace(pattern, (_m, start: string, end: string) => `${start}${render()}\n${end}`)
  }
  return rendered
}

if (process.argv[1]?.endsWith('docs-tables.ts')) {
  for (const path of Object.keys(GENERATED_PAGES)) {
    const url = new URL(`../${path}`, import.meta.url)
    writeFileSync(url, renderPage(path, readFileSync(url, 'utf8')))
  }
}
