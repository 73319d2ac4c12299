import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MODULES, validatorsModule } from '../scripts/shape-validators.mjs'
import { objectBody } from '../src/body-shape.js'
import { shapeCheck } from '../src/http/validation.js'
import * as plantValidators from '../src/plants/shape-validators.js'
import { AJV_OPTIONS, forValues, sharedShapeCheck } from '../src/schema-check.js'
import { NewToken, TokenRollRequest } from '../src/tokens/schemas.js'
import * as tokenValidators from '../src/tokens/shape-validators.js'
import { checkOf, refusalsFor, type ShapeCheck } from '../src/validation-errors.js'

// The CLI checks token options and imported plants with validators generated from the schemas at
// build time (scripts/shape-validators.mjs). Here the built modules are the code the schemas and Ajv
// setup in src generate now, and, for each shape, the generated validator and the schema compiled now
// give every sample the same verdict, refusal and cleaned value: a build older than a schema fails.

/** What a check makes of a sample: its refusal (kind, code, words) and the value it leaves. */
function verdict(check: ShapeCheck, sample: unknown) {
  const value = structuredClone(sample)
  const refusal = check(value)
  return {
    refusal: refusal && {
      kind: refusal.constructor.name,
      code: refusal.entry.code,
      message: refusal.message,
    },
    value,
  }
}

const plant = { id: 1n, name: 'Fern' }
const SHAPES: [name: string, compiled: ShapeCheck, generated: ShapeCheck, samples: unknown[]][] = [
  [
    'NewToken',
    sharedShapeCheck(NewToken),
    checkOf(tokenValidators.NewToken, refusalsFor('body', 'NewToken')),
    [
      { name: 'reader', scopes: ['plants:read'] },
      {
        name: 'r',
        scopes: ['plants:read', 'tokens:manage'],
        expiresIn: '30d',
        rateLimit: '100/1m',
        extra: 1,
      },
      { name: 'reader', scopes: ['plants:read'], expiresIn: null, rateLimit: null },
      { name: '', scopes: ['plants:read'] },
      { name: 'n'.repeat(101), scopes: ['plants:read'] },
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
    ],
  ],
  [
    'TokenRollRequest',
    sharedShapeCheck(TokenRollRequest),
    checkOf(tokenValidators.TokenRollRequest, refusalsFor('body', 'TokenRollRequest')),
    [
      {},
      { overlap: '0s' },
      { overlap: '720h', extra: true },
      { overlap: '721h' },
      { overlap: 'later' },
      { overlap: 1 },
    ],
  ],
  [
    'NewPlant',
    shapeCheck('NewPlant'),
    objectBody(checkOf(plantValidators.NewPlant, refusalsFor('body', 'NewPlant'))),
    [
      plant,
      { ...plant, tag: 'green', extra: [1] },
      { ...plant, id: -9223372036854775808n },
      { ...plant, id: '1' },
      { ...plant, id: 1.5 },
      { name: 'Fern' },
      { id: 1n },
      { ...plant, name: '' },
      { ...plant, name: 'n'.repeat(500) },
      { ...plant, name: 'a\u0001b' },
      { ...plant, name: 'a\ud800b' },
      { ...plant, name: '🌿'.repeat(100) },
      { ...plant, tag: '' },
      { ...plant, tag: 't'.repeat(500) },
      { ...plant, tag: 'a\ud800' },
      { ...plant, tag: null },
      { id: 'x', name: 7, tag: 8 },
      null,
      [],
      'plant',
      undefined,
    ],
  ],
]

describe('the validators generated from the schemas', () => {
  it.each(SHAPES)(
    'give every sample of %s the verdict its schema gives',
    (_name, compiled, generated, samples) => {
      const refused = samples.filter((sample) => compiled(structuredClone(sample)) !== undefined)
      // Both verdicts are among the samples: agreeing on all-valid or all-refused would prove little.
      expect(refused.length).toBeGreaterThan(0)
      expect(refused.length).toBeLessThan(samples.length)
      for (const sample of samples) expect(verdict(generated, sample)).toEqual(verdict(compiled, sample))
    },
  )

  it.each(MODULES)(
    'dist/$file is the code the schemas in src generate',
    async ({ file, schemas, shapes }) => {
      const module = (await import(`../src/${schemas}`)) as Record<string, object>
      const expected = validatorsModule(
        shapes.map((name) => module[name] as object),
        { AJV_OPTIONS, forValues },
      )
      expect(readFileSync(new URL(`../dist/${file}`, import.meta.url), 'utf8')).toBe(expected)
    },
  )
})
