import { describe, expect, it } from 'vitest'
import { type AppError, errors } from '../../src/errors.js'
import { sharedSchemas } from '../../src/http/schemas.js'
import { validatorCompiler } from '../../src/http/validation.js'
import { refusalsFor } from '../../src/validation-errors.js'

type Compiled = (value: unknown) => { value?: unknown; error?: Error }
const compile = (schema: object, httpPart: string) =>
  validatorCompiler({ schema, httpPart, method: 'GET', url: '/x' }) as Compiled

describe('the schema compiler', () => {
  it('has a refusal row for every field of every body shape, so that no failure falls through', () => {
    for (const name of [
      'NewPlant',
      'Plant',
      'PlantPatch',
      'NewPlants',
      'PlantDeletion',
      'NewWebhook',
      'WebhookUpdate',
      'ReplayRequest',
      'RecoverRequest',
      'NewToken',
      'TokenRollRequest',
    ]) {
      const schema = sharedSchemas.find((shape) => (shape as { $id?: string }).$id === name) as {
        properties: object
      }
      const rows = new Set(refusalsFor('body', name).rows.map(([field]) => field))
      expect([...rows].sort(), name).toEqual(Object.keys(schema.properties).sort())
    }
  })

  it('refuses to compile a body that is not a shared shape, or a path or query without refusals', () => {
    expect(() => compile({ type: 'object' }, 'body')).toThrow('must be a shared shape')
    for (const part of ['params', 'querystring']) {
      expect(() =>
        validatorCompiler({ schema: { type: 'object' }, httpPart: part, method: 'GET', url: '/nowhere' }),
      ).toThrow(`no refusals are listed for the ${part} of nowhere`)
    }
  })

  it('checks a body with its shared schema, refusing by the table and dropping unknown fields', () => {
    const validate = compile({ $ref: 'NewPlant#' }, 'body')
    const body = { id: 1n, name: 'Fern', extra: true }
    expect(validate(body)).toEqual({ value: { id: 1n, name: 'Fern' } })
    const refused = (value: unknown) => {
      const error = validate(value).error as AppError
      return [error.entry.code, error.message]
    }
    expect(refused({ name: 'Fern' })).toEqual([40004, errors.ID_MISSING.message])
    // The id's row comes before the name's: the first failing field in the table decides.
    expect(refused({ id: '1' })).toEqual([40005, errors.ID_INVALID.message])
    expect(refused({ id: 1n, name: 'a\u0001'.repeat(300) })).toEqual([
      40010,
      'The field name must not contain control characters or lone surrogates.',
    ])
    expect(refused({ id: 1n, name: '\ud800' })[0]).toBe(40010)
    expect(validate({ id: 1n, name: '😀'.repeat(200) }).error).toBeUndefined()
    expect(refused({ id: 1n, name: '😀'.repeat(201) })).toEqual([40007, errors.NAME_LENGTH.message])
    expect(refused({ id: 1n, name: 'Fern', tag: null })).toEqual([40008, errors.TAG_INVALID.message])
    expect(refused([])).toEqual([40003, 'The request body must be a JSON object, not an array.'])
    expect(refused(null)).toEqual([40001, errors.BODY_MISSING.message])
  })

  it('takes `tag: null` in a merge patch only, where it removes the tag', () => {
    const patch = compile({ $ref: 'PlantPatch#' }, 'body')
    expect(patch({ tag: null })).toEqual({ value: { tag: null } })
    const error = patch({ tag: 'x'.repeat(101) }).error as AppError
    expect(error.entry).toBe(errors.TAG_LENGTH)
  })

  it('reads path and query integers from their text, exactly and without other spellings', () => {
    const params = validatorCompiler({
      schema: { type: 'object', properties: { id: { type: 'integer', format: 'int64' } } },
      httpPart: 'params',
      method: 'GET',
      url: '/plants/:id',
    }) as Compiled
    expect(params({ id: '9223372036854775807' })).toEqual({ value: { id: 9223372036854775807n } })
    for (const id of ['05', '+5', '1e2', '9223372036854775808', '-0', '']) {
      expect((params({ id }).error as AppError).entry, id).toBe(errors.PATH_ID_INVALID)
    }
  })

  it('documents a header schema without refusing on it: the handler that reads a header parses it', () => {
    const validate = compile(
      {
        type: 'object',
        properties: { 'idempotency-key': { type: 'string', minLength: 1, pattern: '^[!#-~]' } },
      },
      'headers',
    )
    // The quoted form the handler takes, which the documented pattern does not describe.
    expect(validate({ 'idempotency-key': '"abc"' })).toEqual({ value: { 'idempotency-key': '"abc"' } })
    expect(validate({ 'idempotency-key': '' })).toEqual({ value: { 'idempotency-key': '' } })
  })
})
