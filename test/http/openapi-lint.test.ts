import { createConfig, lintFromString } from '@redocly/openapi-core'
import { Spectral } from '@stoplight/spectral-core'
import { oas } from '@stoplight/spectral-rulesets'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeApp, type TestApp } from '../helpers/app.js'
import { sqliteKind } from '../helpers/stores.js'

// Two widely used OpenAPI linters, each with its recommended rules, as a client's tooling would run
// them: the document must draw no error from either (warnings are matters of style).
describe('the OpenAPI document, linted', () => {
  let t: TestApp
  let source: string
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
    source = (await t.app.inject({ url: '/openapi.json' })).body
  })
  afterAll(() => t.close())

  it('names its servers: the one that serves it, relative', () => {
    expect(JSON.parse(source).servers).toEqual([{ url: '/', description: expect.any(String) }])
  })

  it("has no error under Redocly's recommended rules (redocly lint)", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error')
    expect(errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
  })

  it('has no error under spectral:oas (spectral lint)', async () => {
    const spectral = new Spectral()
    spectral.setRuleset({ extends: [[oas as never, 'recommended']] })
    const results = await spectral.run(source)
    // Spectral's severities: 0 is an error.
    const errors = results.filter((r) => r.severity === 0)
    expect(errors.map((r) => `${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([])
  })
})
