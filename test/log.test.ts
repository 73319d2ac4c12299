import { describe, expect, it, vi } from 'vitest'
import { createLogger, lazyChildLogger } from '../src/log.js'
import { captureLines } from './helpers/log.js'

describe('request loggers', () => {
  it('make no pino child for a request that logs nothing at an enabled level', () => {
    const { lines, stream } = captureLines()
    const parent = createLogger('info', stream)
    const child = vi.spyOn(parent, 'child')
    const log = lazyChildLogger(parent, { reqId: 'r-1' }, {})
    log.debug({ a: 1 }, 'not at info')
    log.trace('nor this')
    expect(child).not.toHaveBeenCalled()
    expect(lines).toEqual([])
  })

  it('bind the request id once a line is written, and redact credentials', () => {
    const { lines, stream } = captureLines()
    const parent = createLogger('info', stream)
    const log = lazyChildLogger(parent, { reqId: 'r-2' }, {})
    log.info({ token: 'pst_secret' }, 'hello')
    log.warn('again')
    expect(lines).toHaveLength(2)
    const first = JSON.parse(lines[0] as string)
    expect(first).toMatchObject({ reqId: 'r-2', msg: 'hello', token: '[redacted]' })
    expect(JSON.parse(lines[1] as string)).toMatchObject({ reqId: 'r-2', level: 40 })
    expect(log.level).toBe('info')
  })
})
