import { Type } from 'typebox'
import { type CatalogEntry, errors } from '../errors.js'
import { BATCH_MAX_ITEMS } from '../plants/batch.js'
import { PLANT_EVENT_TYPES } from '../plants/events.js'
import { NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '../plants/model.js'
import { TEXT_PATTERN } from '../plants/validate.js'
import { NewToken, RateLimitText, TokenRollRequest } from '../tokens/schemas.js'
import { TOKEN_ID_PATTERN } from '../tokens/validate.js'
import {
  ANSWER_BODY_KEPT_BYTES,
  DELIVERY_ID_PATTERN,
  DESCRIPTION_MAX_LENGTH,
  SECRET_PREFIX,
  TEST_EVENT_TYPE,
  URL_MAX_LENGTH,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ID_PATTERN,
} from '../webhooks/model.js'
import { DELIVERY_STATUSES } from '../webhooks/validate.js'

// The published shapes. Each is written once here; routes use them for documentation and response
// serialization, and the OpenAPI document (and through it the client's types) is generated from them.

export { NewToken, TokenRollRequest }

/** The values a plant id takes, said wherever one is taken. */
export const INT64_RANGE = '-9223372036854775808 to 9223372036854775807'

export const PlantId = Type.Integer({
  format: 'int64',
  description: `Signed 64-bit integer (${INT64_RANGE}), exact over its whole range: a bare JSON integer, never rounded.`,
  examples: [42],
})

const Name = Type.String({
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: TEXT_PATTERN,
  description: 'The name of the plant',
})
/** What a tag may be, in a plant and in the listing's tag filter alike. */
export const TAG_TEXT = { minLength: 1, maxLength: TAG_MAX_LENGTH, pattern: TEXT_PATTERN }
const Tag = Type.String({ ...TAG_TEXT, description: 'Tag that specifies the type of the plant' })

// The named shapes: registered once as shared schemas (see `sharedSchemas`), referenced by routes
// through `ref`, and published as components of the OpenAPI document under the same names.

export const NewPlant = Type.Object(
  { id: PlantId, name: Name, tag: Type.Optional(Tag) },
  {
    $id: 'NewPlant',
    title: 'NewPlant',
    description: 'The request body for creation. Unknown fields are ignored.',
  },
)

export const Plant = Type.Object(
  { id: Type.Optional(PlantId), name: Name, tag: Type.Optional(Tag) },
  {
    $id: 'Plant',
    title: 'Plant',
    description:
      'The body of a full replacement (PUT). No tag means the plant has none. An id, when present, must equal the one in the path. Unknown fields are ignored.',
  },
)

export const PlantPatch = Type.Object(
  {
    id: Type.Optional(PlantId),
    name: Type.Optional(Name),
    tag: Type.Optional(Type.Union([Tag, Type.Null()])),
  },
  {
    $id: 'PlantPatch',
    title: 'PlantPatch',
    description:
      'A JSON merge patch (RFC 7386) of a plant: the fields it names are set, `tag: null` removes the tag, absent fields stay. An id, when present, must equal the one in the path. Unknown fields are ignored.',
  },
)

export const StoredPlant = Type.Object(
  { id: PlantId, name: Name, tag: Type.Optional(Tag) },
  {
    $id: 'StoredPlant',
    title: 'StoredPlant',
    description: 'A plant as stored: its id, name and, when it has one, tag.',
  },
)

export const NewPlants = Type.Object(
  {
    plants: Type.Array(Type.Unsafe(ref('NewPlant')), {
      minItems: 1,
      maxItems: BATCH_MAX_ITEMS,
      description: `1 to ${BATCH_MAX_ITEMS} plants, created all or none`,
    }),
  },
  {
    $id: 'NewPlants',
    title: 'NewPlants',
    description: 'The request body of a batch create. Unknown fields are ignored.',
  },
)

export const StoredPlants = Type.Object(
  { plants: Type.Array(Type.Unsafe(ref('StoredPlant')), { description: 'In the order sent' }) },
  { $id: 'StoredPlants', title: 'StoredPlants', description: 'The plants a batch created.' },
)

export const PlantDeletion = Type.Object(
  {
    ids: Type.Array(PlantId, {
      minItems: 1,
      maxItems: BATCH_MAX_ITEMS,
      description: `1 to ${BATCH_MAX_ITEMS} plant ids, deleted all or none`,
    }),
    allowMissing: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Pass over ids no plant has, instead of refusing the batch with 404',
      }),
    ),
  },
  {
    $id: 'PlantDeletion',
    title: 'PlantDeletion',
    description: 'The request body of a batch delete. Unknown fields are ignored.',
  },
)

export const DeletedPlants = Type.Object(
  {
    deleted: Type.Array(PlantId, {
      description: 'The ids deleted, in the order sent (without those passed over with allowMissing)',
    }),
  },
  { $id: 'DeletedPlants', title: 'DeletedPlants', description: 'The plants a batch deleted.' },
)

const errorCodes = Object.values(errors).map((e) => e.code)

export const ErrorBody = Type.Object(
  {
    error: Type.Integer({ format: 'int32', enum: errorCodes, description: 'Stable numeric error code' }),
    message: Type.String({ description: 'Text of the error' }),
  },
  {
    $id: 'Error',
    title: 'Error',
    additionalProperties: false,
    description: 'Every failure, with a stable code from the error catalog.',
  },
)

const WebhookEvents = Type.Array(Type.Union(WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type))), {
  minItems: 1,
  description: 'Event types to receive; all of them when omitted on creation',
})
const Timestamp = Type.String({ format: 'date-time' })
const NullableTimestamp = Type.Union([Timestamp, Type.Null()])
// No `format: uri`, only the scheme as a pattern: RFC 3986 refuses URLs the service takes and stores as the WHATWG URL parser
// writes them (an IDN host in punycode, a space or an é percent-encoded), so a client or proxy that
// validates against the schema would refuse them.
const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: URL_MAX_LENGTH,
  pattern: '^https?://',
  description: `An absolute http or https URL, without credentials or fragment; by default not a loopback, private, link-local or metadata address. Parsed as the WHATWG URL Standard does, and stored and sent in the form it gives (an IDN host in punycode, a space or an é percent-encoded); at most ${URL_MAX_LENGTH} characters both as given and as stored`,
})
// null, as absent on creation, is no description; in an update it removes the current one.
const Description = Type.Union(
  [Type.String({ maxLength: DESCRIPTION_MAX_LENGTH, pattern: TEXT_PATTERN }), Type.Null()],
  {
    description: `For people: at most ${DESCRIPTION_MAX_LENGTH} characters, without control characters or lone surrogates; null for none`,
  },
)

export const WebhookId = Type.String({ pattern: WEBHOOK_ID_PATTERN.source, description: 'Subscription id' })
export const DeliveryId = Type.String({ pattern: DELIVERY_ID_PATTERN.source, description: 'Delivery id' })

export const NewWebhook = Type.Object(
  { url: WebhookUrl, events: Type.Optional(WebhookEvents), description: Type.Optional(Description) },
  {
    $id: 'NewWebhook',
    title: 'NewWebhook',
    description: 'A subscription to create. Unknown fields are ignored.',
  },
)

export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(WebhookEvents),
    description: Type.Optional(Description),
    disabled: Type.Optional(Type.Boolean({ description: 'false re-enables a disabled subscription' })),
  },
  { $id: 'WebhookUpdate', title: 'WebhookUpdate', description: 'Fields to change; at least one.' },
)

const webhookFields = {
  id: WebhookId,
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Description,
  disabled: Type.Boolean(),
  disabledReason: Type.Union([Type.Literal('manual'), Type.Literal('failing'), Type.Null()], {
    description: '`failing`: disabled automatically after failing for the configured time',
  }),
  disabledAt: NullableTimestamp,
  failingSince: Type.Union([Timestamp, Type.Null()], {
    description: 'Start of the current run of failed attempts',
  }),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], {
    description: 'Until then, the secret replaced by the last rotation signs too',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

export const Webhook = Type.Object(webhookFields, {
  $id: 'Webhook',
  title: 'Webhook',
  description: 'A subscription (no secret).',
})

const Secret = Type.String({
  pattern: `^${SECRET_PREFIX}[A-Za-z0-9+/]+={0,2}$`,
  description: 'The signing secret, shown only in this answer',
})

export const WebhookWithSecret = Type.Object(
  { ...webhookFields, secret: Secret },
  {
    $id: 'WebhookWithSecret',
    title: 'WebhookWithSecret',
    description: 'A subscription with its signing secret.',
  },
)

export const Delivery = Type.Object(
  {
    id: DeliveryId,
    eventId: Type.String({ description: 'The `webhook-id` header: stable across attempts and replays' }),
    eventType: Type.String(),
    status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
    attempts: Type.Integer({
      format: 'int32',
      description: 'Attempts since the delivery was queued (or requeued)',
    }),
    nextAttemptAt: NullableTimestamp,
    lastAttemptAt: NullableTimestamp,
    lastStatusCode: Type.Union([Type.Integer({ format: 'int32' }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lastDurationMs: Type.Union([Type.Integer({ format: 'int32' }), Type.Null()]),
    createdAt: Timestamp,
  },
  {
    $id: 'Delivery',
    title: 'Delivery',
    description: 'One event for one subscription, with its latest attempt.',
  },
)

export const DeliveryAttempt = Type.Object(
  {
    attemptedAt: Type.String({
      format: 'date-time',
      description: "When the attempt ended (for a delivery's latest attempt, its lastAttemptAt)",
    }),
    durationMs: Type.Integer({ format: 'int32' }),
    statusCode: Type.Union([Type.Integer({ format: 'int32' }), Type.Null()], {
      description: "The receiver's HTTP status; null when no answer came",
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the attempt failed: the status (`answered 500`) or the network error (a timeout, a refused connection, a refused address); null when it succeeded',
    }),
    body: Type.Union([Type.String(), Type.Null()], {
      description: `The first ${ANSWER_BODY_KEPT_BYTES} bytes of the receiver's answer, read as UTF-8: each sequence of bytes that is not UTF-8 (a character cut at the end too) is U+FFFD; null when no answer came`,
    }),
    bodyTruncated: Type.Boolean({ description: 'The answer went on past `body`' }),
  },
  {
    $id: 'DeliveryAttempt',
    title: 'DeliveryAttempt',
    description: 'One attempt of a delivery, as its outcome was recorded.',
  },
)

/** `since` as a replay and a recovery take it: the same rules, said of what each resends. */
const since = (what: string) =>
  Type.String({
    format: 'date-time',
    description: `${what} (RFC 3339, not in the future; a leap second :60 means the end of its minute)`,
  })

export const ReplayRequest = Type.Object(
  { since: since('Resend every event from this time on') },
  { $id: 'ReplayRequest', title: 'ReplayRequest' },
)

export const RecoverRequest = Type.Object(
  { since: since('Resend the deliveries that ended failed (their last attempt) from this time on') },
  { $id: 'RecoverRequest', title: 'RecoverRequest' },
)

export const ReplayResult = Type.Object(
  // int64: at thousands of creates a second, a week's retained events can pass 2^31.
  { queued: Type.Integer({ format: 'int64' }) },
  { $id: 'ReplayResult', title: 'ReplayResult' },
)

export const PlantEvent = Type.Object(
  {
    type: Type.Union(PLANT_EVENT_TYPES.map((type) => Type.Literal(type))),
    timestamp: Timestamp,
    data: Type.Unsafe(ref('StoredPlant')),
  },
  {
    $id: 'PlantEvent',
    title: 'PlantEvent',
    description:
      'A Standard Webhooks message: the plant as stored (for plant.deleted, as it was). Headers webhook-id, webhook-timestamp and webhook-signature sign it.',
  },
)

export const TestEvent = Type.Object(
  {
    type: Type.Literal(TEST_EVENT_TYPE),
    timestamp: Timestamp,
    data: Type.Object({ webhookId: WebhookId }),
  },
  {
    $id: 'TestEvent',
    title: 'TestEvent',
    description:
      'The message POST /webhooks/{id}/test sends to that subscription alone, signed like every other.',
  },
)

export const TokenId = Type.String({
  pattern: TOKEN_ID_PATTERN.source,
  description: 'The public id of a token: the 16 hex digits after `pst_`',
})
const tokenFields = {
  id: TokenId,
  name: Type.String(),
  prefix: Type.String({ description: 'The start of the token, `pst_<id>_`, to recognise it by' }),
  scopes: Type.Array(Type.String()),
  createdAt: Timestamp,
  expiresAt: Type.Union([Timestamp, Type.Null()], { description: 'null: it never expires' }),
  lastUsedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'When a request last used it, written at most once a minute',
  }),
  revokedAt: NullableTimestamp,
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
  rateLimit: Type.Union([RateLimitText, Type.Null()], {
    description: 'Its own limit as `COUNT/WINDOW`; null: the service-wide one applies',
  }),
  previousSecretExpiresAt: Type.Union([Timestamp, Type.Null()], {
    description: 'Until then, the secret replaced by the last roll works too; null: no overlap is running',
  }),
  createdBy: Type.Union(
    [
      Type.Object({ tokenId: TokenId }, { additionalProperties: false }),
      Type.Object({ iss: Type.String(), sub: Type.String() }, { additionalProperties: false }),
      Type.Null(),
    ],
    {
      description:
        'Who issued it over HTTP: a token (`tokenId`) or a JWT (its `iss` and `sub`); null: issued on the database host with `plantstore token create`',
    },
  ),
}

export const Token = Type.Object(tokenFields, {
  $id: 'Token',
  title: 'Token',
  description: 'A bearer token (never its secret).',
})

export const TokenWithSecret = Type.Object(
  {
    ...tokenFields,
    secret: Type.String({
      pattern: '^pst_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$',
      description:
        'The whole bearer token, shown only in this answer: send it as `Authorization: Bearer <secret>`',
    }),
  },
  { $id: 'TokenWithSecret', title: 'TokenWithSecret', description: 'A token with its secret.' },
)

const ChangedPlant = (description: string) =>
  Type.Union([Type.Unsafe(ref('StoredPlant')), Type.Null()], { description })

export const Change = Type.Object(
  {
    cursor: Type.String({
      description:
        "The change's place in commit order, opaque: pass it as `after` to GET /events (or as `Last-Event-ID`) to read the changes after this one",
    }),
    type: Type.Union(PLANT_EVENT_TYPES.map((type) => Type.Literal(type))),
    time: Type.String({ format: 'date-time', description: 'When the change was written' }),
    actor: Type.Union(
      [
        Type.Object({ tokenId: TokenId }, { additionalProperties: false }),
        Type.Object({ iss: Type.String(), sub: Type.String() }, { additionalProperties: false }),
        Type.Object(
          { cli: Type.String({ description: 'The command, e.g. `import`' }) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'Who made the change: a token (`tokenId`, its public id), a JWT (its `iss` and `sub`), or a command on the database host (`cli`); null for a change stored before changes recorded their actor',
      },
    ),
    requestId: Type.Union([Type.String(), Type.Null()], {
      description: 'The `X-Request-Id` of the response that made the change; null for a command',
    }),
    before: ChangedPlant('The plant before the change; null for plant.created'),
    after: ChangedPlant('The plant after the change; null for plant.deleted'),
  },
  {
    $id: 'Change',
    title: 'Change',
    description: "One change to a plant, the same in a plant's history, the change feed and the live stream.",
  },
)

/** Registered with `app.addSchema` before any route. */
export const sharedSchemas = [
  NewPlant,
  Plant,
  PlantPatch,
  StoredPlant,
  NewPlants,
  StoredPlants,
  PlantDeletion,
  DeletedPlants,
  ErrorBody,
  NewWebhook,
  WebhookUpdate,
  Webhook,
  WebhookWithSecret,
  Delivery,
  DeliveryAttempt,
  ReplayRequest,
  RecoverRequest,
  ReplayResult,
  PlantEvent,
  TestEvent,
  NewToken,
  TokenRollRequest,
  Token,
  TokenWithSecret,
  Change,
]

type SharedName =
  | 'NewPlant'
  | 'Plant'
  | 'PlantPatch'
  | 'StoredPlant'
  | 'NewPlants'
  | 'StoredPlants'
  | 'PlantDeletion'
  | 'DeletedPlants'
  | 'Error'
  | 'NewWebhook'
  | 'WebhookUpdate'
  | 'Webhook'
  | 'WebhookWithSecret'
  | 'Delivery'
  | 'DeliveryAttempt'
  | 'ReplayRequest'
  | 'RecoverRequest'
  | 'ReplayResult'
  | 'PlantEvent'
  | 'TestEvent'
  | 'NewToken'
  | 'TokenRollRequest'
  | 'Token'
  | 'TokenWithSecret'
  | 'Change'

/** A reference to a shared shape; extra keys (description, headers) describe one use of it. */
export function ref(name: SharedName, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { $ref: `${name}#`, ...extra }
}

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid',
  401: 'Missing, malformed, unknown, expired or revoked bearer token, or a JWT refused',
  403: 'The token lacks the required scope',
  404: 'Not found',
  405: 'Method not allowed',
  408: 'The request took too long to arrive',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition failed',
  413: 'Body too large',
  415: 'Unsupported media type',
  417: 'Expectation failed',
  422: 'Unprocessable',
  429: 'Rate limited',
  500: 'Unexpected error',
  503: 'Temporarily unavailable',
}

const text = (description: string) => ({ type: 'string', description })
const TOKEN_CHALLENGE = text(
  'The bearer challenge (RFC 6750): `Bearer realm="plantstore"`, and when a bearer token was sent, `error="invalid_token"` with an `error_description`',
)
const SCOPE_CHALLENGE = text(
  'The bearer challenge (RFC 6750): `Bearer realm="plantstore", error="insufficient_scope"` with the `scope` needed',
)
const RETRY_AFTER = text('Seconds to wait before trying again')

/** The headers an error answer of this status carries besides the usual ones. */
const STATUS_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': TOKEN_CHALLENGE },
  403: { 'WWW-Authenticate': SCOPE_CHALLENGE },
  429: {
    'Retry-After': RETRY_AFTER,
    'RateLimit-Limit': text('Requests allowed per window'),
    'RateLimit-Remaining': text('Requests left in the current window'),
    'RateLimit-Reset': text('Seconds until the window resets'),
  },
  503: { 'Retry-After': RETRY_AFTER },
}

/** The headers an error answer with this code carries besides those of its status. */
const CODE_HEADERS: Record<number, Record<string, unknown>> = {
  [errors.IDEMPOTENCY_IN_PROGRESS.code]: {
    'Retry-After': text(`On ${errors.IDEMPOTENCY_IN_PROGRESS.code}: seconds to wait before trying again`),
  },
}

/** Codes only the change stream gives (a ticket's, a full stream limit): a bare status leaves them out. */
const OWN_CODES: ReadonlySet<CatalogEntry> = new Set([
  errors.TICKET_INVALID,
  errors.TICKET_EXPIRED,
  errors.STREAMS_FULL,
])

/**
 * An operation's error responses, each documented with the Error shape, the codes it can carry and
 * its headers. A catalog entry names one code the operation can answer with; a bare status stands
 * for every code of that status (401: whatever is wrong with the token; 413, 415, 429, 500, 503: one
 * code each).
 */
export function errorResponses(...answers: Array<number | CatalogEntry>): Record<number, unknown> {
  const codes = new Map<number, number[]>()
  for (const answer of answers) {
    const status = typeof answer === 'number' ? answer : answer.status
    const listed = codes.get(status) ?? []
    if (typeof answer === 'number') {
      for (const e of Object.values(errors)) if (e.status === status && !OWN_CODES.has(e)) listed.push(e.code)
    } else listed.push(answer.code)
    codes.set(status, listed)
  }
  const responses: Record<number, unknown> = {}
  for (const [status, listed] of codes) {
    const description = `${STATUS_DESCRIPTIONS[status] ?? 'Error'} (error codes: ${listed.join(', ')})`
    const headers = Object.assign({}, STATUS_HEADERS[status], ...listed.map((code) => CODE_HEADERS[code]))
    responses[status] = ref(
      'Error',
      Object.keys(headers).length > 0 ? { description, headers } : { description },
    )
  }
  return responses
}

/** How an error response's description lists its codes; the contract tests read it the same way. */
const LISTED_CODES = /\(error codes: ([\d, ]+)\)/

const codesOf = (response: unknown): string[] =>
  LISTED_CODES.exec((response as { description?: string }).description ?? '')?.[1]?.split(', ') ?? []

/**
 * `responses` with `answers` added: a status it already documents gains the codes it does not list
 * yet, keeping its own description and headers.
 */
export function withErrorResponses(
  responses: Record<string, unknown>,
  ...answers: Array<number | CatalogEntry>
): Record<string, unknown> {
  const merged = { ...responses }
  for (const [status, added] of Object.entries(errorResponses(...answers))) {
    const present = merged[status] as { description?: string } | undefined
    if (present === undefined) {
      merged[status] = added
      continue
    }
    const listed = codesOf(present)
    const missing = codesOf(added).filter((code) => !listed.includes(code))
    if (missing.length === 0) continue
    const description = String(present.description).replace(
      LISTED_CODES,
      `(error codes: ${[...listed, ...missing].join(', ')})`,
    )
    merged[status] = { ...present, description }
  }
  return merged
}

/** What a PATCH takes: a JSON merge patch (RFC 7386), or the same document labelled plain JSON. */
export const PATCH_MEDIA_TYPES = ['application/merge-patch+json', 'application/json']

/** A PATCH's error responses: its 415 also names the formats it takes (Accept-Patch, RFC 5789 §2.2). */
export function patchErrorResponses(...answers: Array<number | CatalogEntry>): Record<number, unknown> {
  const responses = errorResponses(...answers)
  const unsupported = responses[415] as Record<string, unknown> | undefined
  if (unsupported) {
    const headers = {
      'Accept-Patch': text(`The patch formats the operation takes: ${PATCH_MEDIA_TYPES.join(', ')}`),
    }
    responses[415] = { ...unsupported, headers }
  }
  return responses
}

/**
 * What any operation that reads a JSON body can answer about the body as a whole. 40000 is not among
 * them: the one body fault it would stand for, a body whose length is not its Content-Length, never
 * reaches a route, since Node's parser frames each body by that length. Every operation still lists
 * 40000, for the answers given before it runs (see withOperationalErrors in openapi.ts).
 */
export const BODY_ERRORS = [
  errors.BODY_MISSING,
  errors.BODY_MALFORMED,
  errors.BODY_NOT_OBJECT,
  413,
  415,
] as const
