import { Ajv } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { AppError, errors } from '../errors.js'

/**
 * Request parts whose rules are the domain's (bodies and path ids, where int64 must stay exact and
 * each failure has its own catalog code) are checked by a domain function registered against the
 * schema object that documents them. The schema stays the one published description; the function
 * is the one implementation of its rules, and returns the cleaned value the handler receives.
 */
type DomainCheck = (value: unknown) => unknown
const domainChecks = new WeakMap<object, DomainCheck>()

export function checkedBy<T extends object>(schema: T, check: DomainCheck): T {
  domainChecks.set(schema, check)
  return schema
}

// Everything else (query strings, headers) is plain JSON Schema. Query values arrive as text, so
// they are coerced; bodies never reach this Ajv.
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false })

interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
  anyOf?: Array<{ const?: unknown }>
  description?: string
}

/** What a query parameter must be, in words, from the schema that documents it. */
function rule(schema: PropertySchema | undefined): string | undefined {
  if (schema?.anyOf?.every((s) => s.const !== undefined)) {
    return `must be one of ${schema.anyOf.map((s) => String(s.const)).join(', ')}`
  }
  if (schema?.type === 'integer' && schema.minimum !== undefined && schema.maximum !== undefined) {
    return `must be an integer from ${schema.minimum} to ${schema.maximum}`
  }
  if (schema?.type === 'string' && schema.description?.includes('`Link: rel="next"`')) {
    return 'must be the cursor given in the `Link` header of the previous page'
  }
  return undefined
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const check = domainChecks.get(schema)
  if (check) {
    return (value: unknown) => {
      try {
        return { value: check(value) }
      } catch (error) {
        return { error: error as Error }
      }
    }
  }
  if (httpPart === 'body') throw new Error('every body schema needs a domain check (checkedBy)')
  const validate = ajv.compile(schema)
  return (value: unknown) => {
    if (validate(value)) return { value }
    const first = validate.errors?.[0]
    const where = first?.instancePath
      ? first.instancePath.slice(1)
      : String(first?.params?.missingProperty ?? '')
    // Query strings are the only part left to plain schemas that a request can fail: every header
    // schema is an optional free-text string, and paths and bodies have domain checks.
    const properties = (schema as { properties?: Record<string, PropertySchema> }).properties
    const words = rule(properties?.[where]) ?? first?.message
    return { error: new AppError(errors.QUERY_INVALID, `The query parameter ${where} ${words}.`) }
  }
}
