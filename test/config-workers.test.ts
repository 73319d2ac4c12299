import { availableParallelism } from 'node:os'
import { describe, expect, it } from 'vitest'
import { ConfigError, resolveServeConfig } from '../src/config.js'

describe('the workers setting', () => {
  it('defaults to one process', () => {
    expect(resolveServeConfig({}, {}).workers).toBe(1)
  })

  it('takes auto as one process per CPU', () => {
    expect(resolveServeConfig({ workers: 'auto' }, {}).workers).toBe(availableParallelism())
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
