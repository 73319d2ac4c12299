import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { validatorsModule } from '../../scripts/shape-validators.mjs'
import { AJV_OPTIONS, forValues, sharedShapeCheck } from '../../src/schema-check.js'
import { NewToken, TokenRollRequest } from '../../src/tokens/schemas.js'
import * as built from '../../src/tokens/shape-validators.js'
import { checkOf, refusalsFor } from '../../src/validation-errors.js'

// The CLI checks its token options with validators generated from the schemas at build time
// (scripts/shape-validators.mjs). Here, for each shape, the generated validator and the schema in src
// compiled now give every sample the same verdict, refusal and cleaned value: generated code that no
// longer matches its schema (a build older than the schema) fails.

const verdict = (check: (value: unknown) => unknown, sample: unknown) => {
  const value = structuredClone(sample)
  const refusal = check(value) as { entry?: { code: number }; message?: string } | undefined
  return {
    refusal: refusal && {
      name: refusal.constructor.name,
      code: refusal.entry?.code,
      message: refusal.message,
    },
    value,
  }
}

const long = 'n'.repeat(101)
const SAMPLES = {
  NewToken: [
    { name: 'reader', scopes: ['plants:read'] },
    {
      name: 'reader',
      scopes: ['plants:read', 'tokens:manage'],
      expiresIn: '30d',
      rateLimit: '100/1m',
      extra: 1,
    },
    { name: 'reader', scopes: ['plants:read'], expiresIn: null, rateLimit: null },
    { name: '', scopes: ['plants:read'] },
    { name: long, scopes: ['plants:read'] },
    { name: '👍'.repeat(100), scopes: ['plants:read'] },
    { name: '👍'.repeat(101), scopes: ['plants:read'] },
    { name: 7, scopes: ['plants:read'] },
    { scopes: ['plants:read'] },
    { name: 'x' },
    { name: 'x', scopes: [] },
    { name: 'x', scopes: ['plants:eat'] },
    { name: 'x', scopes: 'plants:read' },
    { name: 'x', scopes: ['plants:read'], expiresIn: 'soon' },
    { name: 'x', scopes: ['plants:read'], expiresIn: '36501d' },
    { name: 'x', scopes: ['plants:read'], expiresIn: 5 },
    { name: 'x', scopes: ['plants:read'], rateLimit: '0/1m' },
    { name: 'x', scopes: ['plants:read'], rateLimit: '1/25d' },
    { name: '', scopes: ['plants:eat'], expiresIn: 'soon', rateLimit: 'fast' },
    null,
    [],
    'token',
  ],
  TokenRollRequest: [
    {},
    { overlap: '0s' },
    { overlap: '720h', extra: true },
    { overlap: '721h' },
    { overlap: 'later' },
    { overlap: 1 },
    null,
    [],
  ],
} as const

const GENERATED = { NewToken: built.NewToken, TokenRollRequest: built.TokenRollRequest }

describe('the generated token validators', () => {
  it.each([
    ['NewToken', NewToken],
    ['TokenRollRequest', TokenRollRequest],
  ] as const)('give every sample of %s the verdict its schema gives', (name, schema) => {
    const compiled = sharedShapeCheck(schema)
    const generated = checkOf(GENERATED[name], refusalsFor('body', name))
    const refused = SAMPLES[name].filter((sample) => compiled(structuredClone(sample)) !== undefined)
    // Both verdicts are among the samples: agreeing on all-valid or all-refused would prove little.
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.length).toBeLessThan(SAMPLES[name].length)
    for (const sample of SAMPLES[name]) expect(verdict(generated, sample)).toEqual(verdict(compiled, sample))
  })

  it('are the code the schemas in src generate', () => {
    // Not only the samples: the built module is the one the schemas and Ajv setup in src make now.
    const module = readFileSync(new URL('../../dist/tokens/shape-validators.js', import.meta.url), 'utf8')
    expect(module).toBe(validatorsModule([NewToken, TokenRollRequest], { AJV_OPTIONS, forValues }))
  })
})
