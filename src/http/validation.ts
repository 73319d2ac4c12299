import type { FastifyInstance, FastifySchemaCompiler, preValidationHookHandler } from 'fastify'
import { objectBody } from '../body-shape.js'
import { AppError, errors } from '../errors.js'
import { addShape, compileShape, type ShapeCheck } from '../schema-check.js'
import { refusalsFor, type ShapeName } from '../validation-errors.js'
import { sharedSchemas } from './schemas.js'

/**
 * The route schemas are the validators of bodies, paths and query strings: what the OpenAPI document
 * publishes is what Ajv checks (src/schema-check.ts), and a failure's catalog code and words come
 * from the failing field and keyword through the table in src/validation-errors.ts. Nothing else
 * states a shape's rules.
 */

for (const schema of sharedSchemas) addShape(schema)

/** A JSON body's check: the document must be an object before its fields are looked at. */
function bodyCheck(schema: object, refusals: ReturnType<typeof refusalsFor>): ShapeCheck {
  return objectBody(compileShape(schema, false, refusals))
}

/** The check of a shared body shape as a route's, which the CLI's generated ones are held to. */
export function shapeCheck(name: ShapeName): ShapeCheck {
  return bodyCheck({ $ref: `${name}#` }, refusalsFor('body', name))
}

/** The shape name of `{ $ref: 'Name#' }`, as `ref()` writes a shared body. */
function sharedName(schema: object): ShapeName | undefined {
  const target = (schema as { $ref?: unknown }).$ref
  return typeof target === 'string' ? (target.replace(/#$/, '') as ShapeName) : undefined
}

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart, url }) => {
  if (httpPart === 'body') {
    const name = sharedName(schema)
    if (name === undefined) throw new Error(`the body of ${url} must be a shared shape (ref())`)
    return wrap(bodyCheck(schema, refusalsFor('body', name)))
  }
  if (httpPart === 'params' || httpPart === 'querystring') {
    // Path and query shapes are named by the resource they belong to: /plants/:id → plants.
    const resource = url.split('/')[1] ?? ''
    return wrap(compileShape(schema, true, refusalsFor(httpPart, resource)))
  }
  // Headers are documented, not refused here: the handler that reads one parses it with the rules
  // and the catalog code of its own (an Idempotency-Key also in its quoted form, 40014).
  return passHeaders
}

const passHeaders = (value: unknown) => ({ value })

function wrap(check: ShapeCheck) {
  return (value: unknown) => {
    const error = check(value)
    return error === undefined ? { value } : { error }
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
 * validated: by then its parsed values can no longer tell `%FF` from `%25FF`. A route without a
 * query schema does not get the hook. Call before any route.
 */
export function refuseUndecodableQueries(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring === undefined) return
    const own = route.preValidation
    route.preValidation = [refuseUndecodable, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])]
  })
}
