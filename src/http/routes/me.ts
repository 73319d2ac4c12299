import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Principal } from '../../tokens/service.js'
import { errorResponses, TokenId } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

const Caller = Type.Object(
  {
    actor: Type.Union(
      [
        Type.Object({ tokenId: TokenId }, { additionalProperties: false }),
        Type.Object({ iss: Type.String(), sub: Type.String() }, { additionalProperties: false }),
      ],
      { description: 'Who the token speaks for, as the changes it makes record it' },
    ),
    name: Type.String({ description: "The token's name, or a JWT's subject" }),
    scopes: Type.Array(Type.String(), { description: 'What the token may do' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'null: it never expires',
    }),
  },
  { description: 'The caller' },
)

/**
 * Who the bearer of the request is and what it may do: what a program (the console among them) asks
 * before it offers an action, rather than trying one and reading a 403. Any valid token may ask.
 */
export async function meRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/me',
    {
      schema: {
        operationId: 'getCaller',
        summary: "The caller: who the request's token speaks for, and its scopes",
        tags: ['tokens'],
        response: { 200: Caller, ...errorResponses(401, 500) },
      },
    },
    async (request) => {
      const principal = request.principal as Principal
      return {
        actor: principal.maker,
        name: principal.name,
        scopes: [...principal.scopes].sort(),
        expiresAt: principal.expiresAt === null ? null : new Date(principal.expiresAt).toISOString(),
      }
    },
  )
  methodNotAllowed(app, '/me', ['GET', 'HEAD'])
}
