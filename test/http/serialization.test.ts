import { describe, expect, it } from 'vitest'
import { shapeSharingSerializers } from '../../src/http/serialization.js'

const errorShape = {
  $id: 'Error',
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'integer' }, message: { type: 'string' } },
}

const route = (httpStatus: string, schema: Record<string, unknown>) => ({
  method: 'GET',
  url: '/plants',
  httpStatus,
  schema,
})

describe('the serializer compiler', () => {
  const compile = shapeSharingSerializers({ Error: errorShape }, {})

  it('builds one serializer for answers that differ only in description and headers', () => {
    const notFound = compile(route('404', { $ref: 'Error#', description: 'Not found (error codes: 40400)' }))
    const limited = compile(
      route('429', { $ref: 'Error#', description: 'Too many requests', headers: { 'Retry-After': {} } }),
    )
    expect(limited).toBe(notFound)
    expect(notFound({ error: 40400, message: 'No plant has id 1', extra: true })).toBe(
      '{"error":40400,"message":"No plant has id 1"}',
    )
  })

  it('builds a serializer of its own for each other shape', () => {
    const error = compile(route('400', { $ref: 'Error#', description: 'Bad request' }))
    const named = compile(route('200', { type: 'object', properties: { name: { type: 'string' } } }))
    expect(named).not.toBe(error)
    expect(named({ name: 'Fern', error: 1 })).toBe('{"name":"Fern"}')
  })
})
