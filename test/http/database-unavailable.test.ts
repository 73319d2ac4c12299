import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { classify, errorLogLevel } from '../../src/http/errors.js'

/** A driver error as better-sqlite3 and pg raise them: a message and a string code. */
const failure = (code: string) => Object.assign(new Error(`failed with ${code}`), { code })

describe('a database that answers but cannot do the work at the moment', () => {
  it.each([
    ['SQLITE_BUSY'],
    ['SQLITE_FULL'],
    ['SQLITE_IOERR_FSYNC'],
    ['SQLITE_READONLY'],
    ['SQLITE_CANTOPEN'],
    ['25006'], // PostgreSQL: read-only transaction (a standby)
    ['25P03'], // session ended for idling in a transaction
    ['40001'], // serialization failure, still there after the last try
    ['40P01'], // deadlock, still there after the last try
    ['53100'], // disk full
    ['53200'], // out of memory
    ['57014'], // statement cancelled
    ['58030'], // I/O error
  ])('answers 503 with Retry-After and logs a warning for %s', (code) => {
    const answer = classify(failure(code))
    expect(answer.entry).toBe(errors.UNAVAILABLE)
    expect(answer.headers).toEqual({ 'retry-after': '1' })
    expect(errorLogLevel(failure(code), answer.entry)).toBe('warn')
  })

  it.each([['23505'], ['42P01'], ['SQLITE_CONSTRAINT_UNIQUE'], ['SQLITE_CORRUPT'], ['25P02'], ['5310']])(
    'is a fault of the service, 500, for %s',
    (code) => {
      expect(classify(failure(code)).entry.status).toBe(500)
    },
  )
})
