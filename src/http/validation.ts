import { Ajv, type ErrorObject, type SchemaObject } from 'ajv'
import type { FastifyInstance, FastifySchemaCompiler, preValidationHookHandler } from 'fastify'
import { AppError, errors } from '../errors.js'
import { parseInt64 } from '../plants/int64.js'
import { InexactNumber, type JSON_NULL } from '../plants/json.js'
import { measureText } from '../plants/validate.js'
import { isRfc3339 } from '../webhooks/validate.js'
import { sharedSchemas, TEXT_PATTERN } from './schemas.js'
import { bodyRefusal, type Refusals, refusalOf, refusalsFor, type ShapeName } from './validation-errors.js'

/**
 * The route schemas are the validators of bodies, paths and query strings: what the OpenAPI document
 * publishes is what Ajv checks, and a failure's catalog code and words come from the failing field
 * and keyword through the table in validation-errors.ts. Ajv sees a copy of each schema adapted to
 * how the values arrive (see `forValues`); nothing else states a shape's rules.
 */

/**
 * Integers arrive as `bigint` from the exact JSON parser (never a rounded number) and as text from a
 * path or a query string; JSON Schema's `type: integer` knows neither, so in Ajv's copy an integer
 * is one of these keywords. Neither converts anything but what it was given in its own form.
 */
const int64 = {
  keyword: 'int64',
  schemaType: 'boolean',
  validate: (_: boolean, value: unknown) => typeof value === 'bigint',
} as const

interface IntegerText {
  format: 'int32' | 'int64'
  minimum?: number
  maximum?: number
}

/** A path or query integer in plain digits (`05`, `+5`, `1e2` are refused), replaced by its value. */
const integerText = {
  keyword: 'integerText',
  schemaType: 'object',
  modifying: true,
  validate: (
    rule: IntegerText,
    value: unknown,
    _schema?: unknown,
    where?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
  ) => {
    if (typeof value !== 'string' || where === undefined) return false
    const parsed = parseInt64(value)
    if (parsed === null) return false
    if (rule.minimum !== undefined && parsed < BigInt(rule.minimum)) return false
    if (rule.maximum !== undefined && parsed > BigInt(rule.maximum)) return false
    where.parentData[where.parentDataProperty] = rule.format === 'int64' ? parsed : Number(parsed)
    return true
  },
} as const

const ajv = new Ajv({
  // Every failure is collected so that the table, not the order Ajv happens to check in, decides
  // which one a request is refused for (see validation-errors.ts); a valid value costs the same.
  allErrors: true,
  // Unknown fields are ignored and never stored.
  removeAdditional: 'all',
  useDefaults: true,
  keywords: [int64, integerText],
  formats: {
    // C0 control characters and lone surrogates: the published pattern says the first; a lone
    // surrogate has no portable pattern (and no UTF-8 encoding, so no store could keep it).
    text: (value: string) => measureText(value) !== -1,
    'date-time': isRfc3339,
    // Annotations of response shapes; request integers are checked by the keywords above.
    int32: true,
    int64: true,
  },
  strictTypes: false,
})

/**
 * Ajv's copy of a published schema: an integer becomes `int64` (a JSON body) or `integerText` (a
 * path or a query string, whose default is given as text, as a client would), and the text pattern
 * becomes the `text` format, which is that pattern and the lone-surrogate rule in one check.
 */
function forValues(node: unknown, fromText: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => forValues(item, fromText))
  if (typeof node !== 'object' || node === null) return node
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) copy[key] = forValues(value, fromText)
  if (copy.pattern === TEXT_PATTERN) {
    delete copy.pattern
    copy.format = 'text'
  }
  if (copy.type === 'integer') {
    const { type: _type, format, minimum, maximum, ...rest } = copy
    if (!fromText) return { ...rest, int64: true }
    const rule = { format, minimum, maximum } as IntegerText
    if (rest.default !== undefined) rest.default = String(rest.default)
    return { ...rest, integerText: rule }
  }
  return copy
}

for (const schema of sharedSchemas) ajv.addSchema(forValues(schema, false) as SchemaObject)

/** A compiled shape: undefined when the value is valid (then cleaned in place), else its refusal. */
export type ShapeCheck = (value: unknown) => AppError | undefined

function compileChecked(schema: object, fromText: boolean, refusals: Refusals): ShapeCheck {
  const validate = ajv.compile(forValues(schema, fromText) as SchemaObject)
  return (value) =>
    validate(value) ? undefined : refusalOf(refusals, validate.errors as ErrorObject[], value)
}

/** A JSON body's check: the document must be an object before its fields are looked at. */
function bodyCheck(schema: object, refusals: Refusals): ShapeCheck {
  const check = compileChecked(schema, false, refusals)
  return (value) => {
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      value instanceof InexactNumber
    ) {
      return bodyRefusal(value as undefined | typeof JSON_NULL)
    }
    return check(value)
  }
}

/** The check of a shared body shape, for what reads the same documents outside HTTP (the CLI). */
export function shapeCheck(name: ShapeName): ShapeCheck {
  return bodyCheck({ $ref: `${name}#` }, refusalsFor('body', name))
}

/** The shape name of `{ $ref: 'Name#' }`, as `ref()` writes a shared body. */
function sharedName(schema: object): ShapeName | undefined {
  const target = (schema as { $ref?: unknown }).$ref
  return typeof target === 'string' ? (target.replace(/#$/, '') as ShapeName) : undefined
}

// Headers are documented, never refused: every one is an optional free-text string, checked as plain
// JSON Schema (and never stripped of the headers a schema does not name).
const headerAjv = new Ajv({ removeAdditional: false, allErrors: false })

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart, url }) => {
  if (httpPart === 'body') {
    const name = sharedName(schema)
    if (name === undefined) throw new Error(`the body of ${url} must be a shared shape (ref())`)
    return wrap(bodyCheck(schema, refusalsFor('body', name)))
  }
  if (httpPart === 'params' || httpPart === 'querystring') {
    // Path and query shapes are named by the resource they belong to: /plants/:id → plants.
    const resource = url.split('/')[1] ?? ''
    return wrap(compileChecked(schema, true, refusalsFor(httpPart, resource)))
  }
  const validate = headerAjv.compile(schema)
  return (value: unknown) => {
    if (validate(value)) return { value }
    const first = validate.errors?.[0]
    const where = first?.instancePath ? `${httpPart}${first.instancePath.replaceAll('/', '.')}` : httpPart
    return { error: new AppError(errors.BAD_REQUEST, `The request's ${where} ${first?.message}.`) }
  }
}

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
