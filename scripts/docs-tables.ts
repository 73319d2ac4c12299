// The README's configuration and error tables are generated from the code's own tables.
// `npm run docs` rewrites them in place; a test fails when the README is out of date.
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

const TABLES: Record<string, () => string> = { 'config-table': configTable, 'error-table': errorTable }

/** The README text with every generated table replaced by its current content. */
export function renderReadme(readme: string): string {
  let text = readme
  for (const [name, render] of Object.entries(TABLES)) {
    const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`)
    if (!pattern.test(text)) throw new Error(`README.md lacks the ${name} markers`)
    text = text.replace(pattern, (_m, start: string, end: string) => `${start}${render()}\n${end}`)
  }
  return text
}

if (process.argv[1]?.endsWith('docs-tables.ts')) {
  const path = new URL('../README.md', import.meta.url)
  writeFileSync(path, renderReadme(readFileSync(path, 'utf8')))
}
