import type { ErrorObject, ValidateFunction } from 'ajv'
import { AppError, type CatalogEntry, errors } from './errors.js'
import { notACursor } from './events/query.js'
import { PLANT_EVENT_TYPES } from './plants/events.js'
import { INT64_MAX, INT64_MIN } from './plants/int64.js'
import { NAME_MAX_LENGTH as PLANT_NAME_MAX, TAG_MAX_LENGTH } from './plants/model.js'
import { CURSOR_RULE, SEARCH_MAX_LENGTH } from './plants/validate.js'
import {
  EXPIRES_IN_REASON,
  NAME_LENGTH_REASON,
  OVERLAP_REASON,
  RATE_LIMIT_REASON,
  SCOPES_REASON,
  type TokenField,
  TokenInputError,
} from './tokens/validate.js'

// Which catalog code and words a request that its schema refuses gets. Ajv reports every failing
// keyword with the path of the value it failed on; the table below turns the first of them into one
// refusal, so that a field's code is stated once, beside the catalog, and not in a check of its own.
//
// How a failure is chosen: a shape's rows are read in order (the order of precedence among fields);
// the first row whose field failed decides. Within a row, its keywords are tried in order, and the
// first that failed gives the refusal; `*` stands for any keyword. A keyword that failed on an item
// of the field (an unknown event type inside `events`) is named `item`. A row that has no keyword
// for what failed lets the next row decide.

/**
 * Makes the refusal of a failed field from its value; called only when a request is refused.
 * Undefined lets the value through to the handler, for the one field whose refusal depends on what
 * is stored (see `deliveryId`).
 */
type Refuse = (value: unknown, found: readonly ErrorObject[]) => AppError | undefined

type Row = readonly [field: string, keywords: Readonly<Record<string, Refuse>>]

export interface Refusals {
  readonly rows: readonly Row[]
  /** Query parameters: any of them given twice is refused before its own rules are read. */
  readonly query: boolean
}

const refuse =
  (entry: CatalogEntry, message?: string): Refuse =>
  () =>
    new AppError(entry, message)

/** The token fields say why in words the CLI repeats for its flags (`invalid --name: …`). */
const refuseToken =
  (entry: CatalogEntry, field: TokenField, reason: string): Refuse =>
  () =>
    new TokenInputError(entry, field, reason)

const characters = (entry: CatalogEntry, what: string) =>
  refuse(entry, `The ${what} must not contain control characters or lone surrogates.`)

/** A plant's text field: its characters, then its length, then anything else (not a string). */
const plantText = (field: string, max: number, length: CatalogEntry, invalid: CatalogEntry): Row => {
  const tooLong = refuse(length, `The field ${field} must be 1 to ${max} characters long.`)
  return [
    field,
    {
      format: characters(errors.TEXT_CHARACTERS, `field ${field}`),
      minLength: tooLong,
      maxLength: tooLong,
      '*': refuse(invalid),
    },
  ]
}

const PLANT_ID: Row = ['id', { required: refuse(errors.ID_MISSING), '*': refuse(errors.ID_INVALID) }]
const PLANT_NAME = plantText('name', PLANT_NAME_MAX, errors.NAME_LENGTH, errors.NAME_INVALID)
const PLANT_TAG = plantText('tag', TAG_MAX_LENGTH, errors.TAG_LENGTH, errors.TAG_INVALID)

/** What the schema that `field` failed allows: the limit of its `keyword`, or its listed values. */
function allowed(found: readonly ErrorObject[], field: string, keyword: string): string {
  for (const error of found) {
    if (fieldOf(error) !== field || error.keyword !== keyword) continue
    if (keyword === 'anyOf') return (error.schema as Array<{ const: unknown }>).map((b) => b.const).join(', ')
    if (keyword === 'integerText') return String((error.schema as { maximum: number }).maximum)
    return String(error.params.limit)
  }
  return ''
}

const WEBHOOK_URL: Row = [
  'url',
  {
    maxLength: (_, found) =>
      new AppError(
        errors.WEBHOOK_URL_INVALID,
        `The field url must be at most ${allowed(found, 'url', 'maxLength')} characters.`,
      ),
    '*': refuse(errors.WEBHOOK_URL_INVALID),
  },
]
const WEBHOOK_EVENTS: Row = [
  'events',
  {
    item: (_, found) =>
      new AppError(
        errors.WEBHOOK_EVENTS_INVALID,
        `The field events must list only ${allowed(found, 'events', 'anyOf')}.`,
      ),
    '*': refuse(errors.WEBHOOK_EVENTS_INVALID),
  },
]
const WEBHOOK_DESCRIPTION: Row = [
  'description',
  {
    format: characters(errors.WEBHOOK_DESCRIPTION_INVALID, 'field description'),
    '*': refuse(errors.WEBHOOK_DESCRIPTION_INVALID),
  },
]
const SINCE: Row = ['since', { '*': refuse(errors.REPLAY_SINCE_INVALID) }]

/** The failures inside the item of `field` with the lowest index: that index, and them as of the item. */
function firstItem(
  found: readonly ErrorObject[],
  field: string,
): { index: number; errors: ErrorObject[] } | undefined {
  const prefix = `/${field}/`
  let index: number | undefined
  for (const error of found) {
    if (!error.instancePath.startsWith(prefix)) continue
    const at = Number.parseInt(error.instancePath.slice(prefix.length), 10)
    if (index === undefined || at < index) index = at
  }
  if (index === undefined) return undefined
  const own = `${prefix}${index}`
  const errors = found
    .filter((e) => e.instancePath === own || e.instancePath.startsWith(`${own}/`))
    .map((e) => ({ ...e, instancePath: e.instancePath.slice(own.length) }))
  return { index, errors }
}

/**
 * A batch's item refused as a body of its shape is, its message naming the item by its place in the
 * body (`The field plants[3].name …`): the first item that fails, so the client can find it.
 */
const batchItem =
  (field: string, rows: readonly Row[], notObject: CatalogEntry, what: string): Refuse =>
  (value, found) => {
    const first = firstItem(found, field)
    if (first === undefined) return new AppError(notObject)
    const { index, errors: own } = first
    const place = `${field}[${index}]`
    const itemValue = (value as unknown[])[index]
    if (typeof itemValue !== 'object' || itemValue === null || Array.isArray(itemValue))
      return new AppError(notObject, `The field ${place} must be ${what}.`)
    const refusal = refusalOf({ rows, query: false }, own, itemValue) as AppError
    return new AppError(refusal.entry, refusal.message.replace(/^The field (\w+)/, `The field ${place}.$1`))
  }

const PLANTS = refuse(errors.BATCH_PLANTS_INVALID)
const IDS = refuse(errors.BATCH_IDS_INVALID)

const tokenName = (reason: string) => refuseToken(errors.TOKEN_NAME_INVALID, 'name', reason)
const TOKEN_NAME_LENGTH = tokenName(NAME_LENGTH_REASON)
const TOKEN_SCOPES = refuseToken(errors.TOKEN_SCOPES_INVALID, 'scopes', SCOPES_REASON)
/** The shared body shapes (the `$id`s of schemas.ts that a request carries). */
const BODIES = {
  NewPlant: [PLANT_ID, PLANT_NAME, PLANT_TAG],
  // A replacement reads its fields first: an id is only compared with the path's.
  Plant: [PLANT_NAME, PLANT_TAG, PLANT_ID],
  PlantPatch: [PLANT_ID, PLANT_NAME, PLANT_TAG],
  NewPlants: [
    [
      'plants',
      {
        required: PLANTS,
        type: PLANTS,
        minItems: PLANTS,
        maxItems: PLANTS,
        item: batchItem(
          'plants',
          [PLANT_ID, PLANT_NAME, PLANT_TAG],
          errors.BATCH_PLANTS_INVALID,
          'a plant object',
        ),
      },
    ],
  ],
  PlantDeletion: [
    [
      'ids',
      {
        required: IDS,
        type: IDS,
        minItems: IDS,
        maxItems: IDS,
        item: (_, found) => {
          const index = firstItem(found, 'ids')?.index ?? 0
          return new AppError(
            errors.ID_INVALID,
            `The field ids[${index}] must be a JSON integer from ${INT64_MIN} to ${INT64_MAX}.`,
          )
        },
      },
    ],
    ['allowMissing', { '*': refuse(errors.ALLOW_MISSING_INVALID) }],
  ],
  NewWebhook: [WEBHOOK_URL, WEBHOOK_EVENTS, WEBHOOK_DESCRIPTION],
  WebhookUpdate: [
    WEBHOOK_URL,
    WEBHOOK_EVENTS,
    WEBHOOK_DESCRIPTION,
    ['disabled', { '*': refuse(errors.WEBHOOK_DISABLED_INVALID) }],
  ],
  ReplayRequest: [SINCE],
  RecoverRequest: [SINCE],
  NewToken: [
    // Over HTTP the scopes are always said: a default would grant what the caller did not name.
    ['scopes', { required: refuseToken(errors.TOKEN_SCOPES_INVALID, 'scopes', 'it is required') }],
    [
      'name',
      { minLength: TOKEN_NAME_LENGTH, maxLength: TOKEN_NAME_LENGTH, '*': tokenName('expected a string') },
    ],
    ['scopes', { '*': TOKEN_SCOPES }],
    ['rateLimit', { '*': refuseToken(errors.TOKEN_RATE_LIMIT_INVALID, 'rateLimit', RATE_LIMIT_REASON) }],
    ['expiresIn', { '*': refuseToken(errors.TOKEN_EXPIRES_IN_INVALID, 'expiresIn', EXPIRES_IN_REASON) }],
  ],
  TokenRollRequest: [
    ['overlap', { '*': refuseToken(errors.TOKEN_OVERLAP_INVALID, 'overlap', OVERLAP_REASON) }],
  ],
} satisfies Record<string, readonly Row[]>

export type ShapeName = keyof typeof BODIES

// A path id that cannot exist is simply not found, as a deleted one is; a plant id is an int64.
const PARAMS: Record<string, readonly Row[]> = {
  plants: [['id', { '*': refuse(errors.PATH_ID_INVALID) }]],
  webhooks: [
    ['id', { '*': refuse(errors.WEBHOOK_NOT_FOUND) }],
    // Which not-found a malformed delivery id is depends on whether its subscription exists (40450
    // when it does not): the service, which looks that up first, finds no such delivery.
    ['deliveryId', { '*': () => undefined }],
  ],
  tokens: [['id', { '*': refuse(errors.TOKEN_NOT_FOUND) }]],
}

const query = (parameter: string, rule: string): Row => [
  parameter,
  { '*': refuse(errors.QUERY_INVALID, `The query parameter ${parameter} must be ${rule}.`) },
]
/** A page size's maximum is its schema's, and the words say it. */
const LIMIT: Row = [
  'limit',
  {
    '*': (_, found) =>
      new AppError(
        errors.QUERY_INVALID,
        `The query parameter limit must be an integer from 1 to ${allowed(found, 'limit', 'integerText')}.`,
      ),
  },
]
const cursor = query('after', 'the cursor given in the `Link` header of the previous page')
const EVENT_TYPE = refuse(
  errors.QUERY_INVALID,
  `The query parameter type must be one of ${PLANT_EVENT_TYPES.join(', ')}.`,
)
/** A change's cursor has a code of its own (a repeat is refused before, as for any parameter). */
const CHANGE_CURSOR = (parameter: string): Row => [
  parameter,
  {
    '*': refuse(errors.CURSOR_INVALID, notACursor(parameter)),
  },
]

/** A query's text: its characters, then its length (anything else, a repeat, is refused before). */
const queryText = (parameter: string, max: number): Row => [
  parameter,
  {
    format: characters(errors.QUERY_INVALID, `query parameter ${parameter}`),
    '*': refuse(
      errors.QUERY_INVALID,
      `The query parameter ${parameter} must be 1 to ${max} characters long.`,
    ),
  },
]

/** Did one of a list's items fail on `keyword`? */
const itemFailed = (found: readonly ErrorObject[], field: string, keyword: string) =>
  found.some((error) => error.instancePath.startsWith(`/${field}/`) && error.keyword === keyword)

const TAG_TOO_LONG = `The query parameter tag must be 1 to ${TAG_MAX_LENGTH} characters long.`

// Every refusal of a query parameter is 40012, in words that name the parameter and its rule.
const QUERIES: Record<string, readonly Row[]> = {
  plants: [
    LIMIT,
    query('after', `a plant id (an integer from ${INT64_MIN} to ${INT64_MAX})`),
    [
      'tag',
      {
        maxItems: (_, found) =>
          new AppError(
            errors.QUERY_INVALID,
            `The query parameter tag may be given at most ${allowed(found, 'tag', 'maxItems')} times.`,
          ),
        item: (_, found) =>
          itemFailed(found, 'tag', 'format')
            ? new AppError(
                errors.QUERY_INVALID,
                'The query parameter tag must not contain control characters or lone surrogates.',
              )
            : new AppError(errors.QUERY_INVALID, TAG_TOO_LONG),
        '*': refuse(errors.QUERY_INVALID, TAG_TOO_LONG),
      },
    ],
    queryText('q', SEARCH_MAX_LENGTH),
    [
      'sort',
      {
        '*': (_, found) =>
          new AppError(
            errors.QUERY_INVALID,
            `The query parameter sort must be one of ${allowed(found, 'sort', 'anyOf')}.`,
          ),
      },
    ],
    query('count', 'true or false'),
    query('cursor', CURSOR_RULE),
    CHANGE_CURSOR('before'),
  ],
  webhooks: [
    LIMIT,
    [
      'status',
      {
        '*': (_, found) =>
          new AppError(
            errors.QUERY_INVALID,
            `The query parameter status must be one of ${allowed(found, 'status', 'anyOf')}.`,
          ),
      },
    ],
    cursor,
  ],
  tokens: [LIMIT, cursor],
  events: [
    LIMIT,
    CHANGE_CURSOR('after'),
    ['type', { item: EVENT_TYPE, '*': EVENT_TYPE }],
    query('ticket', 'a ticket from POST /events/tickets'),
  ],
}

/** The table of a route's body shape, path or query string; a route without one fails at start. */
export function refusalsFor(part: 'body' | 'params' | 'querystring', name: string): Refusals {
  const table: Record<string, readonly Row[]> =
    part === 'body' ? BODIES : part === 'params' ? PARAMS : QUERIES
  const rows = table[name]
  if (rows === undefined) throw new Error(`no refusals are listed for the ${part} of ${name}`)
  return { rows, query: part === 'querystring' }
}

/** The field an error is about: the property a `required` misses, or the first step of its path. */
function fieldOf(error: ErrorObject): string {
  if (error.instancePath === '') return String(error.params.missingProperty ?? '')
  const end = error.instancePath.indexOf('/', 1)
  return end === -1 ? error.instancePath.slice(1) : error.instancePath.slice(1, end)
}

/** The keyword an error counts as in a row: `item` when it failed inside the field's value. */
function keywordOf(error: ErrorObject, field: string): string {
  return error.instancePath.length > field.length + 1 ? 'item' : error.keyword
}

function failed(found: readonly ErrorObject[], field: string, keyword: string): boolean {
  for (const error of found) {
    if (fieldOf(error) === field && (keyword === '*' || keywordOf(error, field) === keyword)) return true
  }
  return false
}

/** The one refusal of a value its schema refused with `found`; undefined: let through after all. */
export function refusalOf(
  refusals: Refusals,
  found: readonly ErrorObject[],
  data: unknown,
): AppError | undefined {
  for (const [field, keywords] of refusals.rows) {
    if (!failed(found, field, '*')) continue
    const value = (data as Record<string, unknown>)[field]
    // A parameter given twice arrives as a list: refused, not merged (`?limit=1&limit=2`), unless it
    // is one that takes a list, whose row says how its items are refused.
    if (refusals.query && Array.isArray(value) && !('item' in keywords)) {
      return new AppError(errors.QUERY_INVALID, `The query parameter ${field} must be given at most once.`)
    }
    for (const keyword in keywords) {
      if (failed(found, field, keyword)) return (keywords[keyword] as Refuse)(value, found)
    }
  }
  // A rule no row names is a table that fell behind its schema: refused all the same, in Ajv's words.
  const first = found[0]
  return new AppError(errors.BAD_REQUEST, `The request ${first?.instancePath ?? ''} ${first?.message ?? ''}.`)
}

/** A compiled shape: undefined when the value is valid (then cleaned in place), else its refusal. */
export type ShapeCheck = (value: unknown) => AppError | undefined

/**
 * A shape's check from its Ajv validator: compiled as the service starts (src/schema-check.ts) or
 * generated at build time (the CLI's, scripts/shape-validators.mjs).
 */
export function checkOf(validate: ValidateFunction, refusals: Refusals): ShapeCheck {
  return (value) =>
    validate(value) ? undefined : refusalOf(refusals, validate.errors as ErrorObject[], value)
}
