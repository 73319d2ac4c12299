import { Type } from 'typebox'
import { SCOPES } from './scopes.js'
import { MAX_OVERLAP_MS, NAME_MAX_LENGTH as TOKEN_NAME_MAX_LENGTH } from './validate.js'

// The token shapes `plantstore token create` and `roll` check their options with, as POST /tokens
// checks its body: apart from src/http/schemas.ts (which publishes them with the others) so that a
// token command loads no HTTP code.

const KnownScope = Type.Union(SCOPES.map((scope) => Type.Literal(scope)))
// What the service parses, as patterns a generated client or form can check. Each is a part of what
// is accepted that a pattern can state: the upper bounds are in the descriptions (and the 400s).
const RATE_LIMIT_PATTERN =
  '^[1-9][0-9]{0,8}/([1-9][0-9]{0,8}ms|[1-9][0-9]{0,5}s|[1-9][0-9]{0,3}m|[1-9][0-9]?h|([1-9]|1[0-9]|2[0-4])d)$'
const EXPIRES_IN_PATTERN =
  '^([1-9][0-9]{3,9}ms|[1-9][0-9]{0,8}s|[1-9][0-9]{0,6}m|[1-9][0-9]{0,4}h|([1-9][0-9]{0,3}|[1-2][0-9]{4}|3[0-5][0-9]{3}|36[0-4][0-9]{2}|36500)d)$'
const OVERLAP_PATTERN =
  '^((0|[1-9][0-9]{0,8})ms|(0|[1-9][0-9]{0,5})s|(0|[1-9][0-9]{0,3})m|(0|[1-9][0-9]?|[1-6][0-9]{2}|7[01][0-9]|720)h|([0-9]|[12][0-9]|30)d)$'
const RateLimitRequest = Type.String({
  pattern: RATE_LIMIT_PATTERN,
  description:
    "`COUNT/WINDOW` as serve's --rate-limit takes it, e.g. `100/1m`: a count from 1 and a window from 1 of ms, s, m, h or d, at most 24d",
})
export const RateLimitText = Type.String({
  pattern: '^[0-9]{1,9}/[0-9]{1,15}(ms|s|m|h|d)$',
  description:
    "`COUNT/WINDOW` as serve's --rate-limit takes it, e.g. `100/1m`: the token's own limit, in place of the service-wide one",
})

export const NewToken = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: TOKEN_NAME_MAX_LENGTH,
      description: `What the token is for: 1 to ${TOKEN_NAME_MAX_LENGTH} characters (trimmed), without control or bidirectional formatting characters`,
    }),
    scopes: Type.Array(KnownScope, {
      minItems: 1,
      description: 'What the token may do: only scopes the calling token holds itself',
    }),
    expiresIn: Type.Optional(
      Type.Union([Type.String({ pattern: EXPIRES_IN_PATTERN }), Type.Null()], {
        description:
          "Lifetime as a duration such as `30s`, `15m`, `12h`, `30d` (1s to 36500d), ending no later than the calling token's expiry (40304 otherwise); absent or null: it expires with the calling token (never, if that one never does)",
      }),
    ),
    rateLimit: Type.Optional(
      Type.Union([RateLimitRequest, Type.Null()], {
        description:
          "No larger count and no faster rate than the calling token's limit (its own, or the service-wide one; 40304 otherwise); absent or null: the calling token's own limit, if it has one",
      }),
    ),
  },
  {
    $id: 'NewToken',
    title: 'NewToken',
    description: 'A token to issue, as `plantstore token create` takes it. Unknown fields are ignored.',
  },
)

export const TokenRollRequest = Type.Object(
  {
    overlap: Type.Optional(
      Type.String({
        pattern: OVERLAP_PATTERN,
        description: `How long the replaced secret keeps working, a duration from \`0s\` (it stops at once) to ${MAX_OVERLAP_MS / 86_400_000}d; default \`24h\``,
      }),
    ),
  },
  { $id: 'TokenRollRequest', title: 'TokenRollRequest' },
)
