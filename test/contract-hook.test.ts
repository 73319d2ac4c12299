import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeApp, type TestApp } from './helpers/app.js'
import { ContractChecker } from './helpers/contract.js'
import { storeKinds } from './helpers/stores.js'

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
  })
})
