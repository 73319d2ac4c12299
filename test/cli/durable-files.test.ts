import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { tempDir } from '../helpers/stores.js'

// Which file each descriptor is, and the file system calls that make a write durable, in order.
const calls: string[] = []
const opened = new Map<number, string>()

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>()
  return {
    ...fs,
    openSync: (path: string, ...rest: unknown[]) => {
      const fd = (fs.openSync as (...args: unknown[]) => number)(path, ...rest)
      opened.set(fd, path)
      return fd
    },
    writeSync: (fd: number, ...rest: unknown[]) => {
      calls.push(`write ${opened.get(fd)}`)
      return (fs.writeSync as (...args: unknown[]) => number)(fd, ...rest)
    },
    fsyncSync: (fd: number) => {
      calls.push(`fsync ${opened.get(fd)}`)
      fs.fsyncSync(fd)
    },
    renameSync: (from: string, to: string) => {
      calls.push(`rename ${from} ${to}`)
      fs.renameSync(from, to)
    },
    linkSync: (from: string, to: string) => {
      calls.push(`link ${from} ${to}`)
      fs.linkSync(from, to)
    },
  }
})

const { whyNotWritable, writePrivateFile } = await import('../../src/cli/private-file.js')
const { exportPlants } = await import('../../src/cli/export.js')
const { backupDatabase } = await import('../../src/cli/backup.js')
const { importPlants } = await import('../../src/cli/import.js')

/** The calls that make the file at `path`, or the copy beside it, and its name durable. */
const durability = (path: string) =>
  calls.filter((call) => /^(fsync|rename|link) /.test(call) && call.includes(dirname(path)))

/** Runs a command without its report on stderr, recording only the calls it makes. */
async function quietly<T>(command: () => Promise<T>): Promise<T> {
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
  try {
    calls.length = 0
    return await command()
  } finally {
    stderr.mockRestore()
  }
}

/** A SQLite database holding two plants. */
async function catalogue(): Promise<{ dir: string; databaseUrl: string }> {
  const dir = tempDir()
  const databaseUrl = `sqlite:${join(dir, 'p.db')}`
  writeFileSync(join(dir, 'p.jsonl'), '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n')
  expect(await quietly(() => importPlants(join(dir, 'p.jsonl'), { databaseUrl }))).toBe(true)
  return { dir, databaseUrl }
}

describe('the bootstrap token file', () => {
  it('is on disk, and so is its name, before the caller goes on to commit the token', () => {
    const path = join(tempDir(), 'token')
    writePrivateFile(path, 'pst_secret\n')
    expect(readFileSync(path, 'utf8')).toBe('pst_secret\n')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    // Unsynced, a power loss could leave the store holding a token whose file came back empty.
    expect(calls).toEqual([
      `write ${path}.partial`,
      `fsync ${path}.partial`,
      `rename ${path}.partial ${path}`,
      `fsync ${dirname(path)}`,
    ])
  })
})

describe('export --output', () => {
  it('is on disk, and so is its name, before the command says it exported', async () => {
    const { dir, databaseUrl } = await catalogue()
    const output = join(dir, 'out', 'plants.jsonl')
    mkdirSync(dirname(output))
    expect(await quietly(() => exportPlants({ databaseUrl, output }))).toBe(2)
    const partial = `${output}.${process.pid}.partial`
    expect(durability(output)).toEqual([
      `fsync ${partial}`,
      `rename ${partial} ${output}`,
      `fsync ${dirname(output)}`,
    ])
  })
})

describe('backup', () => {
  it('is on disk, and so is its name, before the command says it is done', async () => {
    const { dir, databaseUrl } = await catalogue()
    const file = join(dir, 'backups', 'copy.db')
    await quietly(() => backupDatabase(file, { databaseUrl }))
    // VACUUM INTO itself syncs nothing.
    const partial = `${file}.${process.pid}.partial`
    expect(durability(file)).toEqual([
      `fsync ${partial}`,
      `link ${partial} ${file}`,
      `fsync ${dirname(file)}`,
    ])
  })
})

describe('why a private file cannot be written', () => {
  it('is said of the path given, not of the copy beside it', () => {
    const errno = (code: string) => Object.assign(new Error(`${code}: x.partial`), { code })
    expect(whyNotWritable(errno('ENOENT'))).toBe('its folder does not exist')
    expect(whyNotWritable(errno('ENOTDIR'))).toBe('its folder does not exist')
    const at = (code: string, path: string) => Object.assign(errno(code), { path })
    expect(whyNotWritable(at('ENOENT', join(tempDir(), 'missing', 'x.partial')))).toBe(
      'its folder does not exist',
    )
    // A folder that is there but takes no new file, as /proc.
    expect(whyNotWritable(at('ENOENT', '/proc/x.partial'))).toBe('its folder cannot be written')
    expect(whyNotWritable(errno('EISDIR'))).toBe('it is a folder; name a file in it')
    expect(whyNotWritable(errno('EACCES'))).toBe('this user may not write there')
    expect(whyNotWritable(errno('EPERM'))).toBe('this user may not write there')
    expect(whyNotWritable(errno('ENOSPC'))).toBe('ENOSPC: x.partial')
  })
})
