import { closeSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { OpenedFile } from '../../src/store/sqlite/opened-file.js'
import { tempDir } from '../helpers/stores.js'

describe('OpenedFile', () => {
  it('passes while the path names the file it opened, and refuses once it was moved, deleted or replaced', () => {
    const path = join(tempDir(), 'p.db')
    writeFileSync(path, 'x')
    // Held open as SQLite holds it, so that its inode is not free for a new file to take.
    const fd = openSync(path, 'r')
    const file = new OpenedFile(path)
    expect(() => file.check()).not.toThrow()

    renameSync(path, `${path}.moved`)
    expect(() => file.check()).toThrow(StoreUnavailableError)
    expect(() => file.check()).toThrow(/moved or deleted while open/)
    // Put back where it was, it is the same file again.
    renameSync(`${path}.moved`, path)
    expect(() => file.check()).not.toThrow()

    rmSync(path)
    writeFileSync(path, 'x')
    expect(() => file.check()).toThrow(/was replaced while open/)
    closeSync(fd)
  })
})
