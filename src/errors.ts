// The one catalog of error conditions. Every `error` code the service can answer with is listed here,
// with its HTTP status and default message; docs/errors.md and the OpenAPI document are generated
// from it. Codes are stable: never renumber one, only add.

export interface CatalogEntry {
  readonly code: number
  readonly status: number
  readonly message: string
}

function entry(code: number, message: string): CatalogEntry {
  return { code, status: Math.floor(code / 100), message }
}

export const errors = {
  BAD_REQUEST: entry(40000, 'The request is malformed.'),
  BODY_MISSING: entry(40001, 'A request body is required.'),
  BODY_MALFORMED: entry(40002, 'The request body is not valid JSON.'),
  BODY_NOT_OBJECT: entry(40003, 'The request body must be a JSON object.'),
  ID_MISSING: entry(40004, 'The field id is required.'),
  ID_INVALID: entry(
    40005,
    'The field id must be a JSON integer from -9223372036854775808 to 9223372036854775807.',
  ),
  NAME_INVALID: entry(40006, 'The field name is required and must be a string.'),
  NAME_LENGTH: entry(40007, 'The field name must be 1 to 200 characters long.'),
  TAG_INVALID: entry(40008, 'The field tag must be a string.'),
  TAG_LENGTH: entry(40009, 'The field tag must be 1 to 100 characters long.'),
  TEXT_CHARACTERS: entry(40010, 'Text fields must not contain control characters or lone surrogates.'),
  PATH_ID_INVALID: entry(
    40011,
    'The plant id in the path must be an integer from -9223372036854775808 to 9223372036854775807.',
  ),
  QUERY_INVALID: entry(40012, 'A query parameter is invalid.'),
  ID_MISMATCH: entry(40013, 'The id in the body must equal the id in the path.'),
  IDEMPOTENCY_KEY_INVALID: entry(40014, 'The Idempotency-Key header must be 1 to 255 visible characters.'),
  // 40015 was listed once but no request could ever get it (every header the service reads is free
  // text or has its own code); it stays unused.
  WEBHOOK_URL_INVALID: entry(
    40050,
    'The field url must be an absolute http or https URL without credentials.',
  ),
  WEBHOOK_URL_FORBIDDEN: entry(
    40051,
    'The field url must not point to a loopback, private, link-local or metadata address.',
  ),
  WEBHOOK_EVENTS_INVALID: entry(40052, 'The field events must be a non-empty list of known event types.'),
  WEBHOOK_DESCRIPTION_INVALID: entry(
    40053,
    'The field description must be a string of at most 500 characters.',
  ),
  WEBHOOK_DISABLED_INVALID: entry(40054, 'The field disabled must be true or false.'),
  REPLAY_SINCE_INVALID: entry(40055, 'The field since must be an RFC 3339 date-time, not in the future.'),
  WEBHOOK_UPDATE_EMPTY: entry(
    40056,
    'The update must change at least one of url, events, description, disabled.',
  ),
  TOKEN_NAME_INVALID: entry(
    40060,
    'The field name must be 1 to 100 characters, without control or bidirectional formatting characters, and must not hold a token.',
  ),
  TOKEN_SCOPES_INVALID: entry(40061, 'The field scopes must be a non-empty list of known scopes.'),
  TOKEN_EXPIRES_IN_INVALID: entry(
    40062,
    'The field expiresIn must be a duration such as 30s, 15m, 12h or 30d, from 1s to 36500d.',
  ),
  TOKEN_RATE_LIMIT_INVALID: entry(
    40063,
    'The field rateLimit must be COUNT/WINDOW such as 100/1s or 6000/1m, or null for none.',
  ),
  TOKEN_OVERLAP_INVALID: entry(
    40064,
    'The field overlap must be a duration such as 0s, 1h or 24h, at most 30d.',
  ),
  // 40070–40079: the batch operations' bodies as a whole; an item's field keeps its own code.
  BATCH_PLANTS_INVALID: entry(40070, 'The field plants must be a list of 1 to 1000 plants.'),
  BATCH_IDS_INVALID: entry(40071, 'The field ids must be a list of 1 to 1000 plant ids.'),
  ALLOW_MISSING_INVALID: entry(40072, 'The field allowMissing must be true or false.'),
  // 40080–40089: the change feed and stream.
  CURSOR_INVALID: entry(40080, 'The cursor is not one this service gave out.'),
  TOKEN_MISSING: entry(40101, 'A bearer token is required.'),
  TOKEN_MALFORMED: entry(40102, 'The bearer token is malformed.'),
  TOKEN_UNKNOWN: entry(40103, 'The bearer token is not valid.'),
  TOKEN_EXPIRED: entry(40104, 'The bearer token has expired.'),
  TOKEN_REVOKED: entry(40105, 'The bearer token has been revoked.'),
  // 40110–40119: a JWT from the identity provider (--jwt-jwks-url) that is refused; an expired one
  // gets TOKEN_EXPIRED as an opaque token does.
  JWT_NOT_YET_VALID: entry(40110, 'The bearer token is not valid yet: its nbf is in the future.'),
  JWT_ISSUER_WRONG: entry(40111, 'The bearer token was issued by an issuer this service does not trust.'),
  JWT_AUDIENCE_WRONG: entry(40112, 'The bearer token is meant for another audience than this service.'),
  JWT_KEY_UNKNOWN: entry(
    40113,
    'The bearer token is signed by a key the identity provider does not publish.',
  ),
  JWT_SIGNATURE_INVALID: entry(40114, 'The bearer token does not match its signature.'),
  JWT_ALGORITHM_REFUSED: entry(
    40115,
    'The bearer token must be signed with RS256, ES256 or EdDSA; none and HMAC are refused.',
  ),
  JWT_MALFORMED: entry(40116, 'The bearer token is not a well-formed JWT.'),
  JWT_SUBJECT_MISSING: entry(40117, 'The bearer token carries no subject (sub).'),
  JWT_EXPIRY_MISSING: entry(40118, 'The bearer token carries no expiry (exp).'),
  // 40120–40129: a stream ticket (POST /events/tickets), which opens change streams in a browser.
  TICKET_INVALID: entry(40120, 'The stream ticket is not valid.'),
  TICKET_EXPIRED: entry(40121, 'The stream ticket has expired: ask for a new one.'),
  SCOPE_MISSING: entry(40301, 'The token lacks the scope this operation needs.'),
  SCOPE_NOT_GRANTABLE: entry(40302, 'A token cannot grant a scope it does not hold itself.'),
  ROLL_SCOPE_NOT_HELD: entry(
    40303,
    'A token cannot roll a token that holds a scope it does not hold itself: rolling hands out its secret.',
  ),
  TOKEN_OUTLIVES_MAKER: entry(
    40304,
    'A token cannot make or roll a token that expires after it or is allowed more requests than it.',
  ),
  ROUTE_NOT_FOUND: entry(40401, 'No such route.'),
  PLANT_NOT_FOUND: entry(40402, 'No plant has this id.'),
  WEBHOOK_NOT_FOUND: entry(40450, 'No webhook subscription has this id.'),
  DELIVERY_NOT_FOUND: entry(40451, 'This webhook subscription has no delivery with this id.'),
  TOKEN_NOT_FOUND: entry(40460, 'No token has this id.'),
  TOKEN_NOT_ACTIVE: entry(
    40461,
    'This token is revoked or expired: it has no secret to roll. Issue a new token instead.',
  ),
  METHOD_NOT_ALLOWED: entry(40501, 'This method is not allowed on this route.'),
  REQUEST_TIMEOUT: entry(40801, 'The request took too long to arrive.'),
  PLANT_EXISTS: entry(40901, 'A plant with this id already exists.'),
  IDEMPOTENCY_IN_PROGRESS: entry(40902, 'A request with this Idempotency-Key is still being processed.'),
  ID_REPEATED: entry(40903, 'An id appears more than once in the batch.'),
  CURSOR_EXPIRED: entry(
    41001,
    'The changes after this cursor are no longer kept: start again without a cursor, or from a newer one.',
  ),
  PRECONDITION_FAILED: entry(41201, 'The plant has changed: If-Match does not match its current ETag.'),
  BODY_TOO_LARGE: entry(41301, 'The request body is too large.'),
  URI_TOO_LONG: entry(41401, 'The request URL is too long.'),
  UNSUPPORTED_MEDIA_TYPE: entry(
    41501,
    'The request body must be application/json in UTF-8 (a PATCH may also be application/merge-patch+json).',
  ),
  RANGE_NOT_SATISFIABLE: entry(41601, 'The requested range is not satisfiable.'),
  EXPECTATION_FAILED: entry(41701, 'The Expect header may only ask for 100-continue.'),
  IDEMPOTENCY_KEY_REUSED: entry(
    42201,
    'This Idempotency-Key was already used with a different request body.',
  ),
  RATE_LIMITED: entry(42901, 'Too many requests: slow down and retry after the time given.'),
  HEADERS_TOO_LARGE: entry(43101, 'The request headers are too large.'),
  INTERNAL: entry(50001, 'An unexpected error occurred.'),
  UNAVAILABLE: entry(50301, 'The service is temporarily unavailable: retry after the time given.'),
  STREAMS_FULL: entry(
    50302,
    'This instance has as many change streams open as it serves: retry after the time given.',
  ),
} as const satisfies Record<string, CatalogEntry>

/** An expected failure with its catalog entry; anything else that is thrown counts as a 500. */
export class AppError extends Error {
  readonly entry: CatalogEntry
  readonly headers: Record<string, string> | undefined

  constructor(entry: CatalogEntry, message?: string, headers?: Record<string, string>) {
    super(message ?? entry.message)
    this.name = 'AppError'
    this.entry = entry
    this.headers = headers
  }
}
