import { availableParallelism } from 'node:os'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'
import { ConfigError, resolveServeConfig } from '../../src/config.js'

// A host's CPU count, as the tests set it; 0 keeps the machine's.
const host = vi.hoisted(() => ({ cpus: 0 }))
vi.mock('node:os', async (importOriginal) => {
  const os = await importOriginal<typeof import('node:os')>()
  return { ...os, availableParallelism: () => host.cpus || os.availableParallelism() }
})

describe('the workers setting', () => {
  it('defaults to one process', () => {
    expect(resolveServeConfig({}, {}).workers).toBe(1)
  })

  afterEach(() => {
    host.cpus = 0
  })

  it('takes auto as one process per CPU', () => {
    expect(resolveServeConfig({ workers: 'auto' }, {}).workers).toBe(availableParallelism())
    host.cpus = 12
    expect(resolveServeConfig({ workers: 'auto' }, {}).workers).toBe(12)
  })

  it('takes auto on a host with more CPUs than the bound as the bound, 64', () => {
    host.cpus = 96
    expect(resolveServeConfig({ workers: 'auto' }, {}).workers).toBe(64)
  })

  it('reads WORKERS from the environment, the flag winning', () => {
    expect(resolveServeConfig({}, { WORKERS: '3' }).workers).toBe(3)
    expect(resolveServeConfig({ workers: '2' }, { WORKERS: '3' }).workers).toBe(2)
  })

  it('refuses several workers on a throwaway in-memory store, however it is given', () => {
    expect(() => resolveServeConfig({ databaseUrl: 'sqlite::memory:' }, { WORKERS: '2' })).toThrow(
      ConfigError,
    )
    expect(resolveServeConfig({ databaseUrl: 'sqlite::memory:', workers: '1' }, {}).workers).toBe(1)
  })
})

describe('plantstore serve, run in this process', () => {
  async function run(argv: string[]): Promise<{ code: number | undefined; stderr: string }> {
    let stderr = ''
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      stderr += String(chunk)
      return true
    })
    const before = process.exitCode
    try {
      await main(['node', 'plantstore', ...argv])
      return { code: process.exitCode === undefined ? undefined : Number(process.exitCode), stderr }
    } finally {
      spy.mockRestore()
      process.exitCode = before
    }
  }

  it('refuses two workers on sqlite::memory: before opening anything, with exit code 2, naming both settings and their env', async () => {
    const result = await run(['serve', '--database-url', 'sqlite::memory:', '--workers', '2'])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      'plantstore: --workers (WORKERS) 2 cannot share --database-url (DATABASE_URL) sqlite::memory: (each process would have its own store); use a sqlite file or postgres\n',
    )
  })

  it('names the setting when --workers is not a count', async () => {
    const result = await run(['serve', '--workers', 'many'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^plantstore: invalid --workers \(WORKERS\) "many"/)
  })
})
