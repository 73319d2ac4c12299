import { _, Ajv, type CodeKeywordDefinition, type KeywordCxt, type Options, type SchemaObject } from 'ajv'
import { parseInt64 } from './plants/int64.js'
import { TEXT_PATTERN } from './plants/validate.js'
import { SHAPE_FORMATS } from './shape-formats.js'
import { checkOf, type Refusals, refusalsFor, type ShapeCheck } from './validation-errors.js'

export type { ShapeCheck }

// The one Ajv setup that checks a request, or a CLI input read as one, against its published schema
// (src/http/schemas.ts, src/tokens/schemas.ts). Ajv sees a copy of each schema adapted to how the
// values arrive (see `forValues`); a refusal's code and words come from validation-errors.ts.

/**
 * Integers arrive as `bigint` from the exact JSON parser (never a rounded number) and as text from a
 * path or a query string; JSON Schema's `type: integer` knows neither, so in Ajv's copy an integer
 * is one of these keywords. Neither takes a value of another type (`"1"` is not a body's id).
 */
const int64: CodeKeywordDefinition = {
  keyword: 'int64',
  schemaType: 'boolean',
  // Generated inline, as Ajv's own type checks are: no call per value.
  code: (cxt: KeywordCxt) => cxt.fail(_`typeof ${cxt.data} != "bigint"`),
}

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

/** A query's `true` or `false`, replaced by its value; anything else (`1`, `yes`, a repeat) is refused. */
const booleanText = {
  keyword: 'booleanText',
  schemaType: 'boolean',
  modifying: true,
  validate: (
    _rule: boolean,
    value: unknown,
    _schema?: unknown,
    where?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
  ) => {
    if ((value !== 'true' && value !== 'false') || where === undefined) return false
    where.parentData[where.parentDataProperty] = value === 'true'
    return true
  },
} as const

/**
 * A query parameter that may repeat arrives as a list only when it does: a single value is made a
 * list of one here, before the list's own rules (its items, its length) are checked. Ajv runs a
 * keyword of no type before those of lists, and reads the value again after a modifying one.
 */
const queryList = {
  keyword: 'queryList',
  schemaType: 'boolean',
  modifying: true,
  validate: (
    _rule: boolean,
    value: unknown,
    _schema?: unknown,
    where?: { parentData: Record<string, unknown>; parentDataProperty: string | number },
  ) => {
    if (where === undefined) return false
    if (typeof value === 'string') where.parentData[where.parentDataProperty] = [value]
    return true
  },
} as const

/**
 * How Ajv reads a published schema; scripts/shape-validators.mjs generates the CLI's validators with
 * the same options, so that they and the service's checks cannot differ.
 */
export const AJV_OPTIONS: Options = {
  // Every failure is collected so that the table, not the order Ajv happens to check in, decides
  // which one a request is refused for; a valid value costs the same.
  allErrors: true,
  // Failures carry the schema they broke, so that a refusal's words quote its limits from there.
  verbose: true,
  // Unknown fields are ignored and never stored.
  removeAdditional: 'all',
  useDefaults: true,
  keywords: [int64, integerText, booleanText, queryList],
  formats: SHAPE_FORMATS,
  strictTypes: false,
}

const ajv = new Ajv(AJV_OPTIONS)

/**
 * Ajv's copy of a published schema: an integer becomes `int64` (a JSON body) or `integerText` (a
 * path or a query string, whose default is given as text, as a client would), and the text pattern
 * becomes the `text` format, which is that pattern and the lone-surrogate rule in one check. In a
 * query string a boolean is `booleanText` and a list a `queryList`.
 */
export function forValues(node: unknown, fromText: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => forValues(item, fromText))
  if (typeof node !== 'object' || node === null) return node
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) copy[key] = forValues(value, fromText)
  if (copy.pattern === TEXT_PATTERN) {
    delete copy.pattern
    copy.format = 'text'
  }
  if (fromText && copy.type === 'boolean') {
    const { type: _type, ...rest } = copy
    if (rest.default !== undefined) rest.default = String(rest.default)
    return { ...rest, booleanText: true }
  }
  if (fromText && copy.type === 'array') {
    const { type: _type, ...rest } = copy
    return { ...rest, queryList: true }
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

/** Makes a shared shape (one with a `$id`) known, once, so that `{ $ref: 'Name#' }` finds it. */
export function addShape(schema: object): void {
  const id = (schema as { $id?: string }).$id
  if (id === undefined) throw new Error('a shared shape needs its $id')
  if (ajv.getSchema(`${id}#`) === undefined) ajv.addSchema(forValues(schema, false) as SchemaObject)
}

/** Compiles a schema once; `fromText` for a path or a query string, whose values are text. */
export function compileShape(schema: object, fromText: boolean, refusals: Refusals): ShapeCheck {
  return checkOf(ajv.compile(forValues(schema, fromText) as SchemaObject), refusals)
}

/**
 * The check of a shared body shape compiled now: what the CLI's generated validators are held to
 * (scripts/shape-validators.mjs).
 */
export function sharedShapeCheck(shape: object): ShapeCheck {
  addShape(shape)
  const id = (shape as { $id: string }).$id
  return compileShape({ $ref: `${id}#` }, false, refusalsFor('body', id))
}
