import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RateLimit } from '../../config.js'
import { AppError, errors } from '../../errors.js'
import { boundsOfMade, checkRollBounds } from '../../tokens/bounds.js'
import { type NewTokenBody, newTokenInput, tokensQuery } from '../../tokens/requests.js'
import type { Principal, TokenService } from '../../tokens/service.js'
import { missingScopes } from '../../tokens/service.js'
import {
  overlapMs,
  TOKEN_CURSOR_PATTERN,
  TOKENS_LIMIT_DEFAULT,
  TOKENS_LIMIT_MAX,
} from '../../tokens/validate.js'
import { tokenView } from '../../tokens/view.js'
import { insufficientScope } from '../auth.js'
import { plainJsonOnly } from '../json-body.js'
import { nextLink } from '../next-link.js'
import { BODY_ERRORS, errorResponses, ref, TokenId } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

export interface TokenRouteOptions {
  tokens: TokenService
  /** --rate-limit: the limit of a calling token without one of its own, which what it makes stays within. */
  rateLimit?: RateLimit | null
}

const Params = Type.Object({ id: TokenId })
const CreateBody = ref('NewToken')
const RollBody = ref('TokenRollRequest')
const TokensQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: TOKENS_LIMIT_MAX,
      default: TOKENS_LIMIT_DEFAULT,
      description: 'Page size',
    }),
  ),
  after: Type.Optional(
    Type.String({
      pattern: TOKEN_CURSOR_PATTERN,
      description:
        'Cursor: only tokens created after this place. Take it from the `Link: rel="next"` header of the previous page.',
    }),
  ),
})

/** What a token's body can be refused with on creation. */
const NEW_TOKEN_ERRORS = [
  ...BODY_ERRORS,
  errors.TOKEN_NAME_INVALID,
  errors.TOKEN_SCOPES_INVALID,
  errors.TOKEN_EXPIRES_IN_INVALID,
  errors.TOKEN_RATE_LIMIT_INVALID,
]

type IdParams = { id: string }

/** Every route runs after authentication, which set the principal. */
const callerOf = (request: FastifyRequest) => request.principal as Principal

/**
 * Bearer tokens, issued, listed, rolled and revoked over HTTP, as the `token` commands do on the
 * database host; every route needs the `tokens:manage` scope. A caller hands out no more than it
 * holds: it cannot issue a token with a scope it lacks, nor roll (and so receive the secret of) one.
 */
export async function tokenRoutes(app: FastifyInstance, options: TokenRouteOptions): Promise<void> {
  const { tokens } = options
  const serviceLimit = options.rateLimit ?? null
  const config = { scope: 'tokens:manage' as const }
  const tags = ['tokens']

  app.post(
    '/tokens',
    {
      config,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'createToken',
        summary: 'Issues a token; the answer carries its secret, shown only here',
        description:
          "The calling token can grant only scopes it holds itself (40302 otherwise), and the token it makes expires no later than it and is allowed no more requests than it (40304 otherwise; `expiresIn` and `rateLimit` left out take the calling token's). The token records its maker in `createdBy`. Otherwise the same rules as `plantstore token create`.",
        tags,
        body: CreateBody,
        response: {
          201: ref('TokenWithSecret', {
            description: 'The token, with its secret',
            headers: { Location: { type: 'string', description: 'The token: `/tokens/{id}`' } },
          }),
          ...errorResponses(
            ...NEW_TOKEN_ERRORS,
            401,
            errors.SCOPE_MISSING,
            errors.SCOPE_NOT_GRANTABLE,
            errors.TOKEN_OUTLIVES_MAKER,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const input = newTokenInput(request.body as NewTokenBody)
      const missing = missingScopes(callerOf(request).scopes, input.scopes)
      if (missing.length > 0) {
        throw insufficientScope(
          errors.SCOPE_NOT_GRANTABLE,
          missing,
          `A token cannot grant a scope it does not hold itself; this one lacks ${missing.join(', ')}.`,
        )
      }
      const maker = callerOf(request)
      const bounds = boundsOfMade(maker, input, serviceLimit, tokens.now())
      const { token, record } = await tokens.create(
        input.name,
        input.scopes,
        bounds.expiresInMs,
        bounds.rateLimit,
        { by: maker.maker, notAfter: bounds.notAfter },
      )
      request.log.info({ tokenId: record.id, createdBy: record.createdBy }, 'token created')
      reply.code(201).header('location', `/tokens/${record.id}`)
      return { ...tokenView(record, tokens.now()), secret: token }
    },
  )
  app.get(
    '/tokens',
    {
      config,
      schema: {
        operationId: 'listTokens',
        summary: 'Lists tokens, oldest first, one page at a time (never a secret)',
        description:
          'Revoked and expired tokens are listed too, until retention removes them. When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.',
        tags,
        querystring: TokensQuery,
        response: {
          200: {
            type: 'object',
            description: 'A page of tokens, oldest first',
            required: ['data'],
            properties: { data: { type: 'array', items: ref('Token') } },
            headers: { Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`' } },
          },
          ...errorResponses(errors.QUERY_INVALID, 401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (request, reply) => {
      const query = tokensQuery(request.query as { limit: number; after?: string })
      const page = await tokens.list(query)
      if (page.next !== undefined) {
        reply.header('link', nextLink('/tokens', { limit: String(query.limit), after: page.next }))
      }
      const now = tokens.now()
      return { data: page.tokens.map((token) => tokenView(token, now)) }
    },
  )
  methodNotAllowed(app, '/tokens', ['GET', 'HEAD', 'POST'])

  app.get(
    '/tokens/:id',
    {
      config,
      schema: {
        operationId: 'getToken',
        summary: 'Reads a token (never its secret)',
        tags,
        params: Params,
        response: {
          200: ref('Token', { description: 'The token' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.TOKEN_NOT_FOUND, 500),
        },
      },
    },
    async (request) => tokenView(await tokens.get((request.params as IdParams).id), tokens.now()),
  )
  app.delete(
    '/tokens/:id',
    {
      config,
      schema: {
        operationId: 'revokeToken',
        summary: 'Revokes a token: every secret of it stops working, on every instance within 5 seconds',
        description:
          'A token revoked before is left as it was and the answer is 204 again, as `plantstore token revoke` succeeds again: what was asked for holds. The token stays listed, with status `revoked`.',
        tags,
        params: Params,
        response: {
          204: Type.Null({ description: 'Revoked (now or before)' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.TOKEN_NOT_FOUND, 500),
        },
      },
    },
    async (request, reply) => {
      const revocation = await tokens.revoke((request.params as IdParams).id)
      if (revocation === 'not-found') throw new AppError(errors.TOKEN_NOT_FOUND)
      return reply.code(204).send()
    },
  )
  methodNotAllowed(app, '/tokens/:id', ['GET', 'HEAD', 'DELETE'])

  app.post(
    '/tokens/:id/roll',
    {
      config,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'rollToken',
        summary:
          'Gives a token a new secret; the replaced one keeps working for the overlap (default 24h), then stops',
        description:
          'A token has two secrets at most: a secret replaced by an earlier roll whose overlap is still running stops at once. The calling token must hold every scope of the rolled one (40303 otherwise), as the answer hands out its secret. A revoked or expired token cannot be rolled (40461), nor one that expires after the calling token or is allowed more requests than it (40304).',
        tags,
        params: Params,
        body: RollBody,
        response: {
          200: ref('TokenWithSecret', { description: 'The token, with its new secret' }),
          ...errorResponses(
            ...BODY_ERRORS,
            errors.TOKEN_OVERLAP_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.ROLL_SCOPE_NOT_HELD,
            errors.TOKEN_OUTLIVES_MAKER,
            errors.TOKEN_NOT_FOUND,
            errors.TOKEN_NOT_ACTIVE,
            500,
          ),
        },
      },
    },
    async (request) => {
      const { id } = request.params as IdParams
      const overlap = overlapMs((request.body as { overlap?: string }).overlap)
      // A token's scopes, expiry and limit never change, so what is read here is what the roll hands out.
      const rolled = await tokens.get(id)
      const missing = missingScopes(callerOf(request).scopes, rolled.scopes)
      if (missing.length > 0) {
        throw insufficientScope(
          errors.ROLL_SCOPE_NOT_HELD,
          missing,
          `A token cannot roll a token that holds a scope it does not hold itself; this one lacks ${missing.join(', ')}.`,
        )
      }
      checkRollBounds(callerOf(request), rolled, serviceLimit)
      const { token, record } = await tokens.roll(id, overlap)
      request.log.info({ tokenId: record.id, rolledBy: callerOf(request).maker }, 'token rolled')
      return { ...tokenView(record, tokens.now()), secret: token }
    },
  )
  methodNotAllowed(app, '/tokens/:id/roll', ['POST'])
}
