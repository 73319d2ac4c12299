import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { giveNewName } from '../src/file-sync.js'

describe('giveNewName', () => {
  let folder: string
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'plantstore-file-sync-'))
  })
  afterEach(() => rmSync(folder, { recursive: true, force: true }))

  it('gives the file its new name, keeping the old one for the caller to remove', () => {
    const from = join(folder, 'copy.partial')
    const to = join(folder, 'copy')
    writeFileSync(from, 'finished')
    expect(giveNewName(from, to)).toBe(true)
    expect(readFileSync(to, 'utf8')).toBe('finished')
    expect(readFileSync(from, 'utf8')).toBe('finished')
  })

  it('never replaces a file that took the name meanwhile', () => {
    const from = join(folder, 'copy.partial')
    const to = join(folder, 'copy')
    writeFileSync(from, 'finished')
    writeFileSync(to, 'someone else’s')
    expect(giveNewName(from, to)).toBe(false)
    expect(readFileSync(to, 'utf8')).toBe('someone else’s')
  })
})
