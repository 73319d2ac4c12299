import { execFileSync } from 'node:child_process'
import { lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { backupDatabase } from '../../src/cli/backup.js'
import { exportPlants } from '../../src/cli/export.js'
import { importFormat, importPlants } from '../../src/cli/import.js'
import { ProgressReporter } from '../../src/cli/progress.js'
import { ConfigError } from '../../src/config.js'
import { tempDir } from '../helpers/stores.js'

// The same commands as in test/process/import-export.test.ts, called in this process so that their branches are
// measured, with stdout and stderr captured.
describe('import, export and backup commands in process', () => {
  let stdout: string
  let stderr: string
  beforeEach(() => {
    stdout = ''
    stderr = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      stdout += String(chunk)
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk)
      return true
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it('reports rejected lines in file order, whether refused on sight or by the store', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.jsonl')
    writeFileSync(file, '{"id":2,"name":"b"}\n')
    expect(await importPlants(file, { databaseUrl })).toBe(true)
    // In one batch, the store's refusal of line 2 is known only after line 3 was refused on sight.
    writeFileSync(file, '{"id":9,"name":"new"}\n{"id":2,"name":"other"}\n{"id":"3"}\n')
    expect(await importPlants(file, { databaseUrl })).toBe(false)
    expect(stdout).toMatch(/^line 2: a different plant with id 2 already exists\nline 3: 40005 [^\n]+\n$/)
    expect(stderr).toMatch(/1 created, 0 unchanged, 2 rejected/)
  })

  it('imports, re-imports, exports and backs up a catalogue', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.csv')
    writeFileSync(file, 'id,name,tag\n1,a,x\n2,b,\n2,other,\nbad\n')
    expect(await importPlants(file, { databaseUrl, batchSize: '1' })).toBe(false)
    expect(stdout).toBe(
      'line 4: a different plant with id 2 already exists\nline 5: 40005 The field id must be a JSON integer from -9223372036854775808 to 9223372036854775807.\n',
    )
    expect(stderr).toMatch(/2 created, 0 unchanged, 2 rejected/)

    const output = join(dir, 'out.jsonl')
    expect(await exportPlants({ databaseUrl, output })).toBe(2)
    expect(readFileSync(output, 'utf8')).toBe('{"id":1,"name":"a","tag":"x"}\n{"id":2,"name":"b"}\n')

    stderr = ''
    expect(await importPlants(output, { databaseUrl, emitEvents: true })).toBe(true)
    expect(stderr).toMatch(/0 created, 2 unchanged, 0 rejected/)

    const copy = join(dir, 'backup', 'copy.db')
    await backupDatabase(copy, { databaseUrl })
    // The copy was written beside it and took its name once complete: nothing else is left there.
    expect(readdirSync(join(dir, 'backup'))).toEqual(['copy.db'])
    expect(statSync(copy).mode & 0o777).toBe(0o600)
    await expect(backupDatabase(copy, { databaseUrl })).rejects.toThrow(/already exists/)
    expect(readdirSync(join(dir, 'backup'))).toEqual(['copy.db'])
    // A path the file system refuses is named with the reason, not the system call's own message:
    // /proc exists, and takes no new file.
    await expect(backupDatabase('/proc/copy.db', { databaseUrl })).rejects.toThrow(
      /^cannot write \/proc\/copy\.db: its folder cannot be written$/,
    )
    await expect(backupDatabase(join(copy, 'x.db'), { databaseUrl })).rejects.toThrow(
      `cannot write ${join(copy, 'x.db')}: a file stands where its folder ${copy} should be`,
    )

    stdout = ''
    expect(await exportPlants({ databaseUrl: `sqlite:${copy}` })).toBe(2)
    expect(stdout).toBe('{"id":1,"name":"a","tag":"x"}\n{"id":2,"name":"b"}\n')
  })

  it('writes the copy beside the output as a new file, not through a link planted at its name', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.jsonl')
    writeFileSync(file, '{"id":1,"name":"a"}\n')
    expect(await importPlants(file, { databaseUrl })).toBe(true)
    // What another user can do in /tmp: the copy's name is the output's, the pid and `.partial`.
    const victim = join(dir, 'victim')
    writeFileSync(victim, 'precious\n')
    const output = join(dir, 'out.jsonl')
    symlinkSync(victim, `${output}.${process.pid}.partial`)
    expect(await exportPlants({ databaseUrl, output })).toBe(1)
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(lstatSync(output).isFile()).toBe(true)
    expect(readFileSync(output, 'utf8')).toBe('{"id":1,"name":"a"}\n')
  })

  it('refuses a symbolic link, a named pipe or a device at the path, for export and backup alike', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.jsonl')
    writeFileSync(file, '{"id":1,"name":"a"}\n')
    expect(await importPlants(file, { databaseUrl })).toBe(true)
    const target = join(dir, 'target.jsonl')
    writeFileSync(target, 'precious\n')
    const link = join(dir, 'link.jsonl')
    symlinkSync(target, link)
    const dangling = join(dir, 'dangling.db')
    symlinkSync(join(dir, 'nowhere'), dangling)
    const fifo = join(dir, 'plants.fifo')
    execFileSync('mkfifo', [fifo])
    const before = readdirSync(dir).sort()
    for (const [path, what] of [
      [link, 'a symbolic link'],
      [dangling, 'a symbolic link'],
      [fifo, 'a named pipe'],
      ['/dev/null', 'a device'],
    ] as const) {
      const refusal = `cannot write ${path}: it is ${what}, which is never written through; name a regular file`
      await expect(exportPlants({ databaseUrl, output: path })).rejects.toThrow(refusal)
      await expect(backupDatabase(path, { databaseUrl })).rejects.toThrow(refusal)
    }
    expect(readFileSync(target, 'utf8')).toBe('precious\n')
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(statSync(fifo).isFIFO()).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(before)
  })

  it('writes standard output for --output -', async () => {
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.jsonl')
    writeFileSync(file, '{"id":1,"name":"a"}\n')
    expect(await importPlants(file, { databaseUrl })).toBe(true)
    expect(await exportPlants({ databaseUrl, output: '-' })).toBe(1)
    expect(stdout).toBe('{"id":1,"name":"a"}\n')
    expect(readdirSync(dir).sort()).toEqual(['p.db', 'p.jsonl'])
  })

  it('refuses unknown formats, batch sizes, missing headers and unreadable files', async () => {
    expect(importFormat('x.NDJSON', undefined)).toBe('jsonl')
    expect(importFormat('x.txt', 'csv')).toBe('csv')
    expect(() => importFormat('x.txt', undefined)).toThrow(ConfigError)
    expect(() => importFormat('x.csv', 'xml')).toThrow(ConfigError)
    expect(() => importFormat('-', undefined)).toThrow(/standard input has no extension/)
    expect(importFormat('-', 'csv')).toBe('csv')
    const dir = tempDir()
    const databaseUrl = `sqlite:${join(dir, 'p.db')}`
    const file = join(dir, 'p.csv')
    writeFileSync(file, 'title\nx\n')
    await expect(importPlants(file, { databaseUrl, batchSize: '0' })).rejects.toThrow(ConfigError)
    // The documented range, 1 to 100,000, at its upper end.
    await expect(importPlants(file, { databaseUrl, batchSize: '100001' })).rejects.toThrow(
      /expected 1 to 100000/,
    )
    await expect(importPlants(file, { databaseUrl })).rejects.toThrow(/line 1: the header/)
    await expect(importPlants(join(dir, 'none.csv'), { databaseUrl })).rejects.toThrow(/cannot read/)
  })
})

describe('import progress', () => {
  const progress = { lines: 500, bytes: 50, totalBytes: 100, created: 400, unchanged: 90, rejected: 10 }

  function capture(tty: boolean) {
    let text = ''
    const write = (chunk: string) => {
      text += chunk
      return true
    }
    const out = { write } as unknown as NodeJS.WriteStream
    return { reporter: new ProgressReporter(out, tty), text: () => text }
  }

  it('draws a bar with rate and ETA on a terminal, at most five times a second', () => {
    const { reporter, text } = capture(true)
    reporter.update({ ...progress, elapsedMs: 1000 })
    reporter.update({ ...progress, elapsedMs: 1100 })
    expect(text()).toBe(
      '\r\x1b[K[############------------]  50% 500 lines (400 created, 90 unchanged, 10 rejected), 500 lines/s, ETA 1s',
    )
    reporter.finish({ ...progress, elapsedMs: 2000 })
    expect(text()).toContain('\r\x1b[Kimport done in 2.0s: 500 lines')
  })

  it('writes a plain line every five seconds elsewhere', () => {
    const { reporter, text } = capture(false)
    reporter.update({ ...progress, elapsedMs: 4000 })
    reporter.update({ ...progress, elapsedMs: 6000 })
    reporter.update({ ...progress, elapsedMs: 7000 })
    expect(text()).toBe('import: 500 lines (400 created, 90 unchanged, 10 rejected), 83 lines/s\n')
  })

  it('says "1 line", not "1 lines"', () => {
    const { reporter, text } = capture(false)
    reporter.finish({ ...progress, lines: 1, created: 1, unchanged: 0, rejected: 0, elapsedMs: 20 })
    expect(text()).toMatch(/: 1 line \(1 created, 0 unchanged, 0 rejected\)/)
  })
})
