import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import { type FeedQuery, readFeed } from '../../events/feed.js'
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX } from '../../events/query.js'
import { PLANT_EVENT_TYPES } from '../../plants/events.js'
import type { Store } from '../../store/types.js'
import { errorResponses, ref } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

const FeedQueryShape = Type.Object({
  after: Type.Optional(
    Type.String({
      description:
        "Only changes after this cursor, in commit order: the `next` of the previous page, or a change's `cursor`. Opaque; anything else is 400 (40080). A cursor older than what retention keeps is 410 (41001). Absent: from the oldest change kept.",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: FEED_LIMIT_MAX,
      default: FEED_LIMIT_DEFAULT,
      description: `Page size, 1 to ${FEED_LIMIT_MAX} (else 400, 40012)`,
    }),
  ),
  type: Type.Optional(
    Type.Array(Type.Union(PLANT_EVENT_TYPES.map((type) => Type.Literal(type))), {
      minItems: 1,
      description:
        'Only changes of these types, the parameter repeated: `type=plant.created&type=plant.deleted`. Every type when absent (else 400, 40012).',
    }),
  ),
})

const FeedPage = {
  type: 'object',
  description: 'A page of changes in commit order, and where to read on from',
  required: ['data', 'next'],
  properties: {
    data: { type: 'array', items: ref('Change') },
    next: {
      type: 'string',
      description:
        'Pass it as `after` to read the changes that follow; present even when `data` is empty. Keep it to read every change exactly once.',
    },
  },
}

/** GET /events: every change to every plant, in commit order, page after page. */
export async function eventRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.get(
    '/events',
    {
      config: { scope: 'events:read' },
      schema: {
        operationId: 'listChanges',
        summary: 'Reads the changes to plants in commit order, after a cursor',
        description:
          'The change feed: every create, update and delete, each once, in the order they committed. Read on with `after` set to the `next` of the previous page; a page with no changes yet still has `next` (poll, or follow GET /events/stream). A change appears within a second of the response that made it.',
        tags: ['events'],
        querystring: FeedQueryShape,
        response: {
          200: FeedPage,
          ...errorResponses(
            errors.QUERY_INVALID,
            errors.CURSOR_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.CURSOR_EXPIRED,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const body = await readFeed(store.events, request.query as FeedQuery)
      return reply.type('application/json; charset=utf-8').send(body)
    },
  )
  methodNotAllowed(app, '/events', ['GET', 'HEAD'])
}
