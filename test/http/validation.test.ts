import { describe, expect, it } from 'vitest'
import { AppError, errors } from '../../src/errors.js'
import { checkedBy, validatorCompiler } from '../../src/http/validation.js'

type Compiled = (value: unknown) => { value?: unknown; error?: Error }
const compile = (schema: object, httpPart: string) =>
  validatorCompiler({ schema, httpPart, method: 'GET', url: '/x' }) as Compiled

describe('the schema compiler', () => {
  it('refuses to compile a body, path or query schema without a domain check', () => {
    for (const part of ['body', 'params', 'querystring']) {
      expect(() => compile({ type: 'object' }, part)).toThrow(`every ${part} schema needs a domain check`)
    }
  })

  it('runs the domain check, returning its cleaned value or its AppError', () => {
    const schema = checkedBy({ type: 'object' }, (value) => {
      if ((value as { n?: string }).n !== '1') throw new AppError(errors.QUERY_INVALID, 'no')
      return { n: 1n }
    })
    const validate = compile(schema, 'querystring')
    expect(validate({ n: '1' })).toEqual({ value: { n: 1n } })
    const failed = validate({ n: '2' }).error as AppError
    expect(failed).toBeInstanceOf(AppError)
    expect(failed.entry).toBe(errors.QUERY_INVALID)
  })

  it('checks a header schema as plain JSON Schema, a failure 400 in words', () => {
    const validate = compile(
      { type: 'object', required: ['x-need'], properties: { 'x-need': { type: 'string' } } },
      'headers',
    )
    expect(validate({ 'x-need': 'here' })).toEqual({ value: { 'x-need': 'here' } })
    const failed = validate({}).error as AppError
    expect(failed.entry).toBe(errors.BAD_REQUEST)
    expect(failed.message).toBe("The request's headers must have required property 'x-need'.")
    expect((validate({ 'x-need': 1 }).error as AppError).message).toBe(
      "The request's headers.x-need must be string.",
    )
  })
})
