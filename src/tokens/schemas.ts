import { Type } from 'typebox'
import { SCOPES } from './scopes.js'
import { MAX_OVERLAP_MS, NAME_MAX_LENGTH as TOKEN_NAME_MAX_LENGTH } from './validate.js'

// The token shapes `plantstore token create` and `roll` check their options with, as POST /tokens
// checks its body: apart from src/http/schemas.ts (which publishes them with the others) so that a
// token command loads no HTTP code.

const KnownScope = Type.Union(SCOPES.map((scope) => Type.Literal(scope)))
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
      Type.Union([Type.String(), Type.Null()], {
        description:
          'Lifetime as a duration such as `30s`, `15m`, `12h`, `30d` (1s to 36500d); absent or null: no expiry',
      }),
    ),
    rateLimit: Type.Optional(
      Type.Union([RateLimitText, Type.Null()], { description: 'Absent or null: none of its own' }),
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
        description: `How long the replaced secret keeps working, a duration from \`0s\` (it stops at once) to ${MAX_OVERLAP_MS / 86_400_000}d; default \`24h\``,
      }),
    ),
  },
  { $id: 'TokenRollRequest', title: 'TokenRollRequest' },
)
