import { Type } from 'typebox'
import { errors } from '../errors.js'
import { NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '../plants/model.js'

// The published shapes. Each is written once here; routes use them for documentation and response
// serialization, and the OpenAPI document (and through it the client's types) is generated from them.

const TEXT_PATTERN = '^[^\\u0000-\\u001f]*$'

export const PlantId = Type.Integer({
  format: 'int64',
  description:
    'Signed 64-bit integer (-9223372036854775808 to 9223372036854775807), exact over its whole range: a bare JSON integer, never rounded.',
  examples: [42],
})

const Name = Type.String({
  minLength: 1,
  maxLength: NAME_MAX_LENGTH,
  pattern: TEXT_PATTERN,
  description: 'The name of the plant',
})
const Tag = Type.String({
  minLength: 1,
  maxLength: TAG_MAX_LENGTH,
  pattern: TEXT_PATTERN,
  description: 'Tag that specifies the type of the plant',
})

export const NewPlant = Type.Object(
  { id: PlantId, name: Name, tag: Type.Optional(Tag) },
  { title: 'NewPlant', description: 'The request body for creation. Unknown fields are ignored.' },
)

export const StoredPlant = Type.Object(
  { id: PlantId, name: Name, tag: Type.Optional(Tag) },
  { title: 'StoredPlant', description: 'A plant as stored: its id, name and, when it has one, tag.' },
)

const errorCodes = Object.values(errors).map((e) => e.code)

export const ErrorBody = Type.Object(
  {
    error: Type.Integer({ format: 'int32', enum: errorCodes, description: 'Stable numeric error code' }),
    message: Type.String({ description: 'Text of the error' }),
  },
  { title: 'Error', additionalProperties: false },
)

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid',
  401: 'Missing, malformed, unknown, expired or revoked bearer token',
  403: 'The token lacks the required scope',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Rate limited',
  500: 'Unexpected error',
  503: 'Temporarily unavailable',
}

/** Error responses for the given statuses, each documented with the Error shape. */
export function errorResponses(...statuses: number[]): Record<number, unknown> {
  const responses: Record<number, unknown> = {}
  for (const status of statuses) {
    responses[status] = { ...ErrorBody, description: STATUS_DESCRIPTIONS[status] ?? 'Error' }
  }
  return responses
}
