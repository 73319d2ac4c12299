import { Ajv } from 'ajv'
import type { FastifyInstance, FastifySchemaCompiler, preValidationHookHandler } from 'fastify'
import { AppError, errors } from '../errors.js'

/**
 * Request parts whose rules are the domain's (bodies, path ids and query strings, where int64 must
 * stay exact and each failure has its own catalog code and words) are checked by a domain function
 * registered against the schema object that documents them. The schema stays the one published description; the function
 * is the one implementation of its rules, and returns the cleaned value the handler receives.
 */
type DomainCheck = (value: unknown) => unknown
const domainChecks = new WeakMap<object, DomainCheck>()

export function checkedBy<T extends object>(schema: T, check: DomainCheck): T {
  domainChecks.set(schema, check)
  return schema
}

// Headers are plain JSON Schema, every one an optional free-text string: documented, never refused.
// Bodies, paths and query strings all have their domain's check, with its own catalog codes and words.
const ajv = new Ajv({ removeAdditional: false, allErrors: false })
const NEEDS_DOMAIN_CHECK = new Set(['body', 'params', 'querystring'])

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
  if (httpPart !== undefined && NEEDS_DOMAIN_CHECK.has(httpPart)) {
    throw new Error(`every ${httpPart} schema needs a domain check (checkedBy)`)
  }
  const validate = ajv.compile(schema)
  return (value: unknown) => {
    if (validate(value)) return { value }
    const first = validate.errors?.[0]
    const where = first?.instancePath ? `${httpPart}${first.instancePath.replaceAll('/', '.')}` : httpPart
    return { error: new AppError(errors.BAD_REQUEST, `The request's ${where} ${first?.message}.`) }
  }
}

/**
 * A 400 for a query string holding a percent-escape that does not decode as UTF-8 (`%FF`, `%`, an
 * encoded surrogate). The framework's query parser keeps such a value as its raw text, so `tag=%FF`
 * would look for the tag "%FF", which is what `tag=%25FF` asks for; a path with such an escape is
 * already a 400.
 */
function undecodableQuery(url: string): AppError | undefined {
  const start = url.indexOf('?')
  if (start === -1 || !url.includes('%', start)) return undefined
  for (const pair of url.slice(start + 1).split('&')) {
    try {
      decodeURIComponent(pair)
    } catch {
      return new AppError(
        errors.QUERY_INVALID,
        'The query string holds a percent-escape that does not decode.',
      )
    }
  }
  return undefined
}

const refuseUndecodable: preValidationHookHandler = (request, _reply, done) =>
  done(undecodableQuery(request.url))

/**
 * Every route that documents a query string refuses an undecodable one, before its query is
 * validated: by then its parsed values can no longer tell `%FF` from `%25FF`. Call before any route.
 */
export function refuseUndecodableQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring === undefined) return
    const own = route.preValidation
    route.preValidation = [refuseUndecodable, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])]
  })
}
