import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderReadme } from '../scripts/docs-tables.js'

describe('README', () => {
  it('carries the current configuration and error tables (npm run docs regenerates them)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    expect(renderReadme(readme)).toBe(readme)
  })
})
