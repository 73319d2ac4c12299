import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeApp, type TestApp } from '../helpers/app.js'
import { ContractChecker, operationsOf } from '../helpers/contract.js'
import { storeKinds } from '../helpers/stores.js'
import { isPartialRun, listedAnswers, unanswered } from './contract-gaps.js'

// The hook that checks every response in the suite must itself be able to fail.
describe('the contract check of live responses', () => {
  let t: TestApp
  let checker: ContractChecker
  beforeAll(async () => {
    t = await makeApp(storeKinds[0] as (typeof storeKinds)[0])
    checker = new ContractChecker(
      t.app.swagger() as unknown as ConstructorParameters<typeof ContractChecker>[0],
    )
  })
  afterAll(() => t.close())

  const json = 'application/json; charset=utf-8'

  it('accepts a documented status with a body of its schema', () => {
    checker.check('GET', '/plants/1', 200, json, '{"id":1,"name":"a"}')
    checker.check('GET', '/plants?limit=1', 200, json, '[{"id":9223372036854775807,"name":"a","tag":"t"}]')
    checker.check('DELETE', '/plants/1', 204, undefined, '')
    expect([...checker.exercised].sort()).toEqual(['deletePlant', 'getPlant', 'listPlants'])
  })

  it('refuses an undocumented status', () => {
    expect(() => checker.check('DELETE', '/plants/1', 200, json, '{}')).toThrow(/does not document/)
    expect(() => checker.check('GET', '/plants', 422, json, '{"error":42201,"message":"x"}')).toThrow(
      /does not document/,
    )
  })

  it('refuses a body that does not match the schema', () => {
    expect(() => checker.check('GET', '/plants/1', 200, json, '{"id":1}')).toThrow(/does not match/)
    expect(() => checker.check('GET', '/plants/1', 200, json, '{"id":1,"name":"a","tag":null}')).toThrow(
      /does not match/,
    )
    expect(() =>
      checker.check('GET', '/plants/1', 404, json, '{"error":40402,"message":"x","stack":"…"}'),
    ).toThrow(/does not match/)
    expect(() => checker.check('GET', '/plants/1', 200, 'text/plain', 'a')).toThrow(/sent text\/plain/)
    expect(() => checker.check('DELETE', '/plants/1', 204, undefined, 'x')).toThrow(/documents no body/)
  })

  it('refuses an error code the operation does not list under that status', () => {
    checker.check('GET', '/plants/x', 400, json, '{"error":40011,"message":"x"}')
    expect(() => checker.check('GET', '/plants', 400, json, '{"error":40011,"message":"x"}')).toThrow(
      /answered code 40011, which it does not list: 40012/,
    )
    expect(() =>
      checker.check('POST', '/webhooks/wh_1/deliveries/x/retry', 404, json, '{"error":40402,"message":"x"}'),
    ).toThrow(/does not list: 40450, 40451/)
  })

  it('refuses an error answer whose documented response lists no codes', () => {
    const bare = new ContractChecker({
      paths: {
        '/x': {
          get: {
            operationId: 'x',
            responses: {
              400: { description: 'Bad', content: { 'application/json': { schema: { type: 'object' } } } },
            },
          },
        },
      },
      components: { schemas: {} },
    })
    expect(() => bare.check('GET', '/x', 400, json, '{"error":40000,"message":"x"}')).toThrow(
      /x 400 lists no error codes/,
    )
  })

  it('leaves undocumented routes alone', () => {
    checker.check('GET', '/nowhere', 404, json, '{"error":40401,"message":"x"}')
    checker.check('DELETE', '/plants', 405, json, '{"error":40501,"message":"x"}')
    // The router refuses a path that does not decode before any operation sees it.
    const answered = checker.answered.size
    checker.check('GET', '/plants/%FF', 400, json, '{"error":40000,"message":"x"}')
    checker.check('PUT', '/plants/%E0%A4%A', 400, json, '{"error":40000,"message":"x"}')
    expect(checker.answered.size).toBe(answered)
  })

  it('records the error answers it saw, by operation, status and code', () => {
    checker.check('GET', '/plants/x', 400, json, '{"error":40011,"message":"x"}')
    checker.check('GET', '/plants/1', 200, json, '{"id":1,"name":"a"}')
    expect(checker.answered).toContain('getPlant 400 40011')
    expect([...checker.answered].every((key) => / [45]\d\d \d{5}$/.test(key))).toBe(true)
  })
})

describe('the error answers no test received', () => {
  const document = {
    paths: {
      '/x': {
        get: {
          operationId: 'x',
          responses: {
            200: { description: 'Fine' },
            400: { description: 'Bad (error codes: 40001, 40002)' },
            503: { description: 'Unavailable (error codes: 50301)' },
          },
        },
      },
      '/y': {
        delete: { operationId: 'y', responses: { 404: { description: 'Gone (error codes: 40402)' } } },
      },
    },
    components: { schemas: {} },
  }
  const listed = listedAnswers(operationsOf(document))

  it('are every code each operation lists under each error status', () => {
    expect(listed).toEqual(['x 400 40001', 'x 400 40002', 'x 503 50301', 'y 404 40402'])
  })

  it('are those listed but never answered, whichever test file answered the others', () => {
    expect(unanswered(listed, ['x 400 40002', 'y 404 40402', 'y 404 40402'])).toEqual([
      'x 400 40001',
      'x 503 50301',
    ])
    expect(unanswered(listed, listed)).toEqual([])
    // An answer the document does not list is the live check's to refuse, not a gap.
    expect(unanswered(listed, [...listed, 'x 400 40003'])).toEqual([])
  })

  it('leave out the exempt ones', () => {
    const exempt = new Map([['x 503 50301', 'no test can make it happen']])
    expect(unanswered(listed, ['x 400 40002'], exempt)).toEqual(['x 400 40001', 'y 404 40402'])
  })

  it('take in every code the published document lists, with none exempt', async () => {
    const t = await makeApp(storeKinds[0] as (typeof storeKinds)[0])
    try {
      const live = listedAnswers(
        operationsOf(t.app.swagger() as unknown as Parameters<typeof operationsOf>[0]),
      )
      expect(live).toContain('createPlant 401 40105')
      expect(unanswered(live, [])).toEqual(live)
    } finally {
      await t.close()
    }
  })
})

// A run of some files only cannot hold the tests to the whole document; it must not fail for that.
describe('the whole-run check', () => {
  it('holds a run to the whole document only when it ran every file, every test', () => {
    expect(isPartialRun({ ran: 64, configured: 64 })).toBe(false)
    expect(isPartialRun({ ran: 64, configured: 64, cliExclude: [] })).toBe(false)
    // Files named on the command line.
    expect(isPartialRun({ ran: 2, configured: 64 })).toBe(true)
    // -t: every file ran, not every test.
    expect(isPartialRun({ ran: 64, configured: 64, testNamePattern: /revoked/ })).toBe(true)
    // --exclude narrows the configured files as well as those run, so the counts agree.
    expect(isPartialRun({ ran: 1, configured: 1, cliExclude: ['test/!(health).test.ts'] })).toBe(true)
  })
})
