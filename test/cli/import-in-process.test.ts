import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { importPlants } from '../../src/cli/import.js'
import { storedPlantIds, tempDir } from '../helpers/stores.js'

// test/process/import-export.test.ts runs the real CLI; this runs the same command in this process, so that
// its reading of lines is measured too.
describe('importPlants, in process', () => {
  const printed: string[] = []
  afterEach(() => {
    vi.restoreAllMocks()
    printed.length = 0
  })
  const capture = () => {
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk))
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
  }
  const file = (name: string, bytes: Buffer | string) => {
    const path = join(tempDir(), name)
    writeFileSync(path, bytes)
    return path
  }

  it('stores the good lines and reports a line too long or not UTF-8 by its number', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const lines = Buffer.concat([
      Buffer.from('\uFEFF{"id": 1, "name": "a"}\r\n'),
      Buffer.from(`{"id": 2, "name": "${'x'.repeat(200)}", "pad": "${'y'.repeat(2000)}"}\n`),
      Buffer.from([0x7b, 0xff, 0x7d, 0x0a]),
      Buffer.from('\n{"id": 3, "name": "c"}'),
    ])
    capture()
    expect(await importPlants(file('p.jsonl', lines), { databaseUrl, bodyLimit: '1kb' })).toBe(false)
    expect(printed.join('')).toBe(
      'line 2: 41301 The request body is too large.\nline 3: 40002 The request body is not valid UTF-8.\n',
    )
    expect([...(await storedPlantIds(databaseUrl))].sort()).toEqual(['1', '3'])
  })

  /** Standard input as a pipe may deliver it: these pieces, each read on its own. */
  const stdinOf = (...pieces: number[][]) =>
    vi
      .spyOn(process, 'stdin', 'get')
      .mockReturnValue(Readable.from(pieces.map((p) => Buffer.from(p))) as never)
  const bytes = (text: string) => [...Buffer.from(text)]

  it('reads a byte order mark that standard input delivers a byte at a time as the mark', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    capture()
    stdinOf([0xef], [0xbb], [0xbf, ...bytes('{"id": 1, "name": "a"}\n')], bytes('{"id": 2, "name": "b"}'))
    expect(await importPlants('-', { databaseUrl, format: 'jsonl' })).toBe(true)
    expect(printed.join('')).toBe('')
    expect([...(await storedPlantIds(databaseUrl))].sort()).toEqual(['1', '2'])
  })

  it('reads input that ends within what could have been a mark, or leaves it, as text of its own', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    capture()
    // Two bytes of a mark, then nothing: a line of its own, and not UTF-8.
    stdinOf([0xef], [0xbb])
    expect(await importPlants('-', { databaseUrl, format: 'jsonl' })).toBe(false)
    // A first byte of a mark, then text: the line holds both, and is not UTF-8 either.
    stdinOf([0xef], bytes('{"id": 3, "name": "c"}\n{"id": 4, "name": "d"}\n'))
    expect(await importPlants('-', { databaseUrl, format: 'jsonl' })).toBe(false)
    expect(printed.join('')).toBe(
      'line 1: 40002 The request body is not valid UTF-8.\nline 1: 40002 The request body is not valid UTF-8.\n',
    )
    expect([...(await storedPlantIds(databaseUrl))]).toEqual(['4'])
  })

  it('reads a quoted CSV field that holds a line break as one record, refused once as POST would', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const csv = 'id,name,tag\r\n1,"a\r\nb",x\r\n2,"c, ""d""",\r\n3,"e\n\n4,f\n'
    capture()
    expect(await importPlants(file('p.csv', csv), { databaseUrl })).toBe(false)
    expect(printed.join('')).toBe(
      'line 2: 40010 The field name must not contain control characters or lone surrogates.\n' +
        'line 5: unterminated quoted field\n',
    )
    expect([...(await storedPlantIds(databaseUrl))]).toEqual(['2'])
  })

  it('holds a quote left open to the body limit, then refuses its record and reads on', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    // 30 lines of 100 bytes after the open quote: past 1kb by the eleventh.
    const filler = Array.from({ length: 30 }, (_, i) => `${i + 100},${'n'.repeat(95)}`).join('\n')
    const csv = `id,name,tag\n1,a,\n2,"open\n${filler}\n3,c,\n`
    capture()
    expect(await importPlants(file('p.csv', csv), { databaseUrl, bodyLimit: '1kb' })).toBe(false)
    expect(printed.join('')).toBe('line 3: unterminated quoted field: no closing quote within 1024 bytes\n')
    // The lines after the one that passed the limit are read as records again.
    const stored = [...(await storedPlantIds(databaseUrl))].map(Number).sort((a, b) => a - b)
    // 2,"open (7 bytes) and eleven lines of 99 bytes pass 1,024: lines 100 to 110 went with the record.
    expect(stored).toEqual([1, 3, ...Array.from({ length: 19 }, (_, i) => 111 + i)])
  })

  it('holds a CSV line to the body limit as a JSON line, refusing a longer record and reading on', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    // A record of megabytes (a column the header names but no plant has, say) was read whole, as a
    // string: past 512 MB one ended the import with "Cannot create a string longer than …".
    const csv = `id,name,tag,notes\n1,a,,short\n2,b,,${'n'.repeat(3_000_000)}\n3,"c",,"${'q'.repeat(2000)}\n4,d,,\n`
    capture()
    expect(await importPlants(file('p.csv', csv), { databaseUrl, bodyLimit: '1kb' })).toBe(false)
    expect(printed.join('')).toBe(
      'line 3: the record is longer than 1024 bytes (--body-limit)\n' +
        'line 4: the record is longer than 1024 bytes (--body-limit)\n',
    )
    expect([...(await storedPlantIds(databaseUrl))].sort()).toEqual(['1', '4'])
  })

  it('refuses a CSV file whose lines end in CR alone as such, however long its one line', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const records = Array.from({ length: 100 }, (_, i) => `${i},plant ${i},\r`).join('')
    capture()
    await expect(
      importPlants(file('p.csv', `id,name,tag\r${records}`), { databaseUrl, bodyLimit: '1kb' }),
    ).rejects.toThrow(/^line 1: the header holds a carriage return that ends no line/)
  })

  it('refuses a CSV file whose header is not UTF-8, naming its line', async () => {
    const databaseUrl = `sqlite:${join(tempDir(), 'p.db')}`
    const csv = Buffer.concat([
      Buffer.from('\n'),
      Buffer.from([0x69, 0x64, 0xff]),
      Buffer.from(',name\n1,a\n'),
    ])
    capture()
    await expect(importPlants(file('p.csv', csv), { databaseUrl })).rejects.toThrow(
      'line 2: 40002 The request body is not valid UTF-8.',
    )
  })
})
