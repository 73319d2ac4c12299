import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/store/errors.js'
import { explainRefusedConnection, isConnectionError, translate } from '../../src/store/postgres/errors.js'

/** A driver error as pg raises it: the server's message and its SQLSTATE. */
const refused = (code: string, message = 'password authentication failed for user "u"') =>
  Object.assign(new Error(message), { code })

// The wording the CLI shows is checked through the real CLI in test/process/cli.test.ts; here each case of
// the rule, in process.
describe('a connection PostgreSQL refused for good', () => {
  it.each([
    [
      '28P01',
      'postgres://u:secret@db.example:6432/plants',
      'PostgreSQL at db.example:6432, database "plants"',
    ],
    ['28000', 'postgres://u:secret@db.example/plants', 'PostgreSQL at db.example, database "plants"'],
    ['3D000', 'postgres://u:secret@db.example/', 'PostgreSQL at db.example, database "u"'],
    [
      '28P01',
      'postgres:///pl%20ants?host=/run/postgresql',
      'PostgreSQL at /run/postgresql, database "pl ants"',
    ],
    ['28P01', 'postgres:///plants', 'PostgreSQL at localhost, database "plants"'],
    ['28P01', 'not a url', 'the PostgreSQL server'],
  ])('%s from %s names %s, keeps the code, never the password', (code, url, where) => {
    const cause = refused(code)
    const explained = explainRefusedConnection(cause, url) as Error & { code?: string }
    expect(explained.message).toBe(`${where} refused the connection: ${cause.message}`)
    expect(explained.message).not.toContain('secret')
    expect(explained.code).toBe(code)
    expect(explained.cause).toBe(cause)
    // Still a refusal, not an outage to retry.
    expect(isConnectionError(explained)).toBe(false)
  })

  it('says that a search path naming no schema that exists has no schema for the tables, and what to do', () => {
    const cause = refused('3F000', 'no schema has been selected to create in')
    const url = 'postgres://u:secret@db.example/plants?options=-c%20search_path%3Dgreenhouse'
    const explained = explainRefusedConnection(cause, url) as Error & { code?: string }
    expect(explained.message).toBe(
      `PostgreSQL at db.example, database "plants" has no schema for the tables: ${cause.message} (the schema the URL's search_path names must be created first)`,
    )
    expect(explained.message).not.toContain('secret')
    expect(explained.code).toBe('3F000')
    expect(isConnectionError(explained)).toBe(false)
  })

  it.each([
    ['an outage', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a query error', refused('42P01', 'relation "x" does not exist')],
    ['an error without a code', new Error('timeout expired')],
    ['something not an error', 'refused'],
  ])('passes %s through as it is', (_what, error) => {
    expect(explainRefusedConnection(error, 'postgres://u:secret@db.example/plants')).toBe(error)
  })
})

// Which failures the store reports as an unreachable database (503, retried at start) and which pass
// through as they are: the rule the outage tests meet through real processes, case by case here.
describe('an unreachable PostgreSQL told from other failures', () => {
  const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code })
  it.each([
    ['a refused connection', coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), true],
    ['a connection exception (class 08)', coded('08006', 'connection failure'), true],
    ['the server shutting down', coded('57P01', 'terminating connection due to administrator command'), true],
    ['too many connections', coded('53300', 'sorry, too many clients already'), true],
    ['the pool ending a broken connection', new Error('Connection terminated unexpectedly'), true],
    ['a lone client that timed out connecting', new Error('timeout expired'), true],
    ['the store saying so itself', new StoreUnavailableError('down'), true],
    [
      'every address of the host refused',
      new AggregateError([coded('ECONNREFUSED'), coded('EHOSTUNREACH')], 'all failed'),
      true,
    ],
    ['a query error', coded('42P01', 'relation "x" does not exist'), false],
    ['a constraint', coded('23505', 'duplicate key value violates unique constraint'), false],
    ['several errors none of them an outage', new AggregateError([coded('42P01')], 'all failed'), false],
    ['something thrown that is not an error', 'down', false],
  ])('%s: %s', (_what, error, unreachable) => {
    expect(isConnectionError(error)).toBe(unreachable)
    const translated = translate(error)
    if (unreachable) {
      expect(translated).toBeInstanceOf(StoreUnavailableError)
    } else {
      expect(translated).toBe(error)
    }
  })

  it('says what the unreachable database answered, and keeps the error it came from', () => {
    const cause = coded('ECONNRESET', 'read ECONNRESET')
    const translated = translate(cause) as StoreUnavailableError
    expect(translated.message).toBe('database unreachable: read ECONNRESET')
    expect(translated.cause).toBe(cause)
  })
})
