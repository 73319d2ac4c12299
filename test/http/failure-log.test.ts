import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { AppError, errors } from '../../src/errors.js'
import { classify } from '../../src/http/errors.js'
import { FailureLog } from '../../src/http/failure-log.js'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { captureLines } from '../helpers/log.js'

describe('the failure log', () => {
  const setup = () => {
    let now = 1_000_000
    const failures = new FailureLog(10_000, () => now)
    const { lines: written, stream } = captureLines()
    const log = pino({ level: 'debug' }, stream)
    const lines = () =>
      written.map(
        (line) =>
          JSON.parse(line) as { level: number; msg: string; refusedWithoutLine?: number; reqId?: string },
      )
    const fail = (error: unknown, bindings?: Record<string, unknown>) =>
      failures.write(log, error, classify(error), bindings)
    return { lines, fail, advance: (ms: number) => (now += ms) }
  }

  it('writes one warning per window while the database is unavailable, then counts what it left out', () => {
    const { lines, fail, advance } = setup()
    const outage = new StoreUnavailableError('database unreachable: connect ECONNREFUSED')
    for (let i = 0; i < 500; i++) fail(outage, { reqId: `r${i}` })
    expect(lines()).toHaveLength(1)
    expect(lines()[0]).toMatchObject({ level: 40, msg: 'database unreachable', reqId: 'r0' })
    expect(lines()[0]?.refusedWithoutLine).toBeUndefined()
    advance(9_999)
    fail(outage)
    expect(lines()).toHaveLength(1)
    advance(1)
    fail(outage)
    expect(lines()).toHaveLength(2)
    expect(lines()[1]).toMatchObject({ level: 40, msg: 'database unreachable', refusedWithoutLine: 500 })
  })

  it('keeps a line for every other failure, outage or not', () => {
    const { lines, fail } = setup()
    fail(new StoreUnavailableError('down'))
    fail(new StoreUnavailableError('down'))
    fail(new Error('a defect'))
    fail(new Error('a defect'))
    fail(new AppError(errors.NAME_INVALID))
    expect(lines().map((l) => [l.level, l.msg])).toEqual([
      [40, 'database unreachable'],
      [50, 'request failed'],
      [50, 'request failed'],
      [20, 'request rejected'],
    ])
  })
})
