import { describe, expect, it } from 'vitest'
import { explainRefusedConnection, isConnectionError } from '../src/store/postgres/errors.js'

/** A driver error as pg raises it: the server's message and its SQLSTATE. */
const refused = (code: string, message = 'password authentication failed for user "u"') =>
  Object.assign(new Error(message), { code })

// The wording the CLI shows is checked through the real CLI in test/cli.test.ts; here each case of
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

  it.each([
    ['an outage', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a query error', refused('42P01', 'relation "x" does not exist')],
    ['an error without a code', new Error('timeout expired')],
    ['something not an error', 'refused'],
  ])('passes %s through as it is', (_what, error) => {
    expect(explainRefusedConnection(error, 'postgres://u:secret@db.example/plants')).toBe(error)
  })
})
