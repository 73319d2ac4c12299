import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errors } from '../../errors.js'
import type { AttemptRecord, DeliveryRecord, Store, WebhookRecord } from '../../store/types.js'
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listAttempts,
  listDeliveries,
  recoverDeliveries,
  replayEvents,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
  updateWebhook,
} from '../../webhooks/service.js'
import {
  attemptsQuery,
  DELIVERIES_LIMIT_DEFAULT,
  DELIVERIES_LIMIT_MAX,
  DELIVERY_CURSOR_PATTERN,
  DELIVERY_STATUSES,
  type DeliveriesQueryText,
  deliveriesQuery,
  type NewWebhookBody,
  newWebhookInput,
  validateReplay,
  type WebhookUpdateBody,
  webhookUpdateInput,
} from '../../webhooks/validate.js'
import { plainJsonOnly } from '../json-body.js'
import { nextLink } from '../next-link.js'
import {
  BODY_ERRORS,
  DeliveryId,
  errorResponses,
  PATCH_MEDIA_TYPES,
  patchErrorResponses,
  ref,
  WebhookId,
} from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

export interface WebhookRouteOptions {
  store: Store
  /** Accept loopback, private and link-local subscriber URLs (local development and tests). */
  allowPrivateUrls: boolean
}

const iso = (d: Date | null) => (d ? d.toISOString() : null)

function webhookView(w: WebhookRecord) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    disabled: w.disabledAt !== null,
    disabledReason: w.disabledReason,
    disabledAt: iso(w.disabledAt),
    failingSince: iso(w.failingSince),
    previousSecretExpiresAt:
      w.previousSecretExpiresAt && w.previousSecretExpiresAt.getTime() > Date.now()
        ? iso(w.previousSecretExpiresAt)
        : null,
    createdAt: w.createdAt.toISOString(),
    updatedAt: w.updatedAt.toISOString(),
  }
}

function deliveryView(d: DeliveryRecord) {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    lastAttemptAt: iso(d.lastAttemptAt),
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    lastDurationMs: d.lastDurationMs,
    createdAt: d.createdAt.toISOString(),
  }
}

/**
 * The answer's bytes read as UTF-8, as a JSON string must be text: what is not UTF-8 (and a character
 * the kept bytes cut in two) is U+FFFD. A byte-order mark is kept, as it came.
 */
const answerText = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true })

function attemptView(a: AttemptRecord) {
  return {
    attemptedAt: a.attemptedAt.toISOString(),
    durationMs: a.durationMs,
    statusCode: a.statusCode,
    error: a.error,
    body: a.body === null ? null : answerText.decode(a.body),
    bodyTruncated: a.bodyTruncated,
  }
}

const Params = Type.Object({ id: WebhookId })
const DeliveryParams = Type.Object({ id: WebhookId, deliveryId: DeliveryId })
const ReplayBody = ref('ReplayRequest')
const RecoverBody = ref('RecoverRequest')
const listOf = (name: 'Webhook' | 'Delivery' | 'DeliveryAttempt', description: string) => ({
  type: 'object',
  description,
  required: ['data'],
  properties: { data: { type: 'array', items: ref(name) } },
})
const PageSize = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: DELIVERIES_LIMIT_MAX,
  default: DELIVERIES_LIMIT_DEFAULT,
  description: 'Page size',
})
const cursorAfter = (what: string) =>
  Type.String({
    pattern: DELIVERY_CURSOR_PATTERN,
    description: `Cursor: only ${what} listed after this place (older ones). Take it from the \`Link: rel="next"\` header of the previous page.`,
  })
const NextPage = {
  headers: { Link: { type: 'string', description: 'The next page, as `<url>; rel="next"`' } },
}
const AttemptsQuery = Type.Object({
  limit: Type.Optional(PageSize),
  after: Type.Optional(cursorAfter('attempts')),
})
const DeliveriesQuery = Type.Object({
  limit: Type.Optional(PageSize),
  after: Type.Optional(cursorAfter('deliveries')),
  status: Type.Optional(
    Type.Union(
      DELIVERY_STATUSES.map((status) => Type.Literal(status)),
      { description: 'Only deliveries in this state' },
    ),
  ),
})

/** What a subscription's body can be refused with, on creation and on change. */
const SUBSCRIPTION_BODY_ERRORS = [
  ...BODY_ERRORS,
  errors.WEBHOOK_URL_INVALID,
  errors.WEBHOOK_URL_FORBIDDEN,
  errors.WEBHOOK_EVENTS_INVALID,
  errors.WEBHOOK_DESCRIPTION_INVALID,
]

type IdParams = { id: string }

/** Subscriptions and their deliveries; every route needs the `webhooks:manage` scope. */
export async function webhookRoutes(app: FastifyInstance, options: WebhookRouteOptions): Promise<void> {
  const store = options.store.webhooks
  const config = { scope: 'webhooks:manage' as const }
  const tags = ['webhooks']

  app.post(
    '/webhooks',
    {
      config,
      preParsing: plainJsonOnly,
      schema: {
        operationId: 'createWebhook',
        summary: 'Subscribes a URL to events; the answer carries the signing secret, shown only here',
        tags,
        body: ref('NewWebhook'),
        response: {
          201: ref('WebhookWithSecret', {
            description: 'The subscription, with its secret',
            headers: { Location: { type: 'string', description: 'The subscription: `/webhooks/{id}`' } },
          }),
          ...errorResponses(...SUBSCRIPTION_BODY_ERRORS, 401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (request, reply) => {
      const record = await createWebhook(
        store,
        newWebhookInput(request.body as NewWebhookBody, options.allowPrivateUrls),
      )
      reply.code(201).header('location', `/webhooks/${record.id}`)
      return { ...webhookView(record), secret: record.secret }
    },
  )
  app.get(
    '/webhooks',
    {
      config,
      schema: {
        operationId: 'listWebhooks',
        summary: 'Lists subscriptions',
        tags,
        response: {
          200: listOf('Webhook', 'Every subscription, oldest first'),
          ...errorResponses(401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async () => ({ data: (await store.list()).map(webhookView) }),
  )
  methodNotAllowed(app, '/webhooks', ['GET', 'HEAD', 'POST'])

  app.get(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'getWebhook',
        summary: 'Reads a subscription, including whether it is disabled and why',
        tags,
        params: Params,
        response: {
          200: ref('Webhook', { description: 'The subscription' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.WEBHOOK_NOT_FOUND, 500),
        },
      },
    },
    async (request) => webhookView(await getWebhook(store, (request.params as IdParams).id)),
  )
  app.patch(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'updateWebhook',
        summary: 'Changes url, events, description, or disables / re-enables a subscription',
        tags,
        params: Params,
        // Like a plant's PATCH, a merge patch (null removes the description) in either media type.
        consumes: PATCH_MEDIA_TYPES,
        body: ref('WebhookUpdate'),
        response: {
          200: ref('Webhook', { description: 'The subscription as changed' }),
          ...patchErrorResponses(
            ...SUBSCRIPTION_BODY_ERRORS,
            errors.WEBHOOK_DISABLED_INVALID,
            errors.WEBHOOK_UPDATE_EMPTY,
            401,
            errors.SCOPE_MISSING,
            errors.WEBHOOK_NOT_FOUND,
            500,
          ),
        },
      },
    },
    async (request) =>
      webhookView(
        await updateWebhook(
          store,
          (request.params as IdParams).id,
          webhookUpdateInput(request.body as WebhookUpdateBody, options.allowPrivateUrls),
        ),
      ),
  )
  app.delete(
    '/webhooks/:id',
    {
      config,
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Deletes a subscription and its deliveries',
        tags,
        params: Params,
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.WEBHOOK_NOT_FOUND, 500),
        },
      },
    },
    async (request, reply) => {
      await deleteWebhook(store, (request.params as IdParams).id)
      return reply.code(204).send()
    },
  )
  methodNotAllowed(app, '/webhooks/:id', ['GET', 'HEAD', 'PATCH', 'DELETE'])

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      config,
      schema: {
        operationId: 'rotateWebhookSecret',
        summary:
          'Replaces the signing secret; the replaced one keeps signing too for 24 hours, until a later rotation replaces it',
        tags,
        params: Params,
        response: {
          200: ref('WebhookWithSecret', { description: 'The subscription, with its new secret' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.WEBHOOK_NOT_FOUND, 500),
        },
      },
    },
    async (request) => {
      const record = await rotateSecret(store, (request.params as IdParams).id)
      return { ...webhookView(record), secret: record.secret }
    },
  )
  methodNotAllowed(app, '/webhooks/:id/rotate-secret', ['POST'])

  app.post(
    '/webhooks/:id/test',
    {
      config,
      schema: {
        operationId: 'testWebhook',
        summary: 'Queues a signed webhook.test message to this subscription only',
        tags,
        params: Params,
        response: {
          202: ref('Delivery', { description: 'The queued delivery' }),
          ...errorResponses(401, errors.SCOPE_MISSING, errors.WEBHOOK_NOT_FOUND, 500),
        },
      },
    },
    async (request, reply) => {
      reply.code(202)
      return deliveryView(await sendTestEvent(store, (request.params as IdParams).id))
    },
  )
  methodNotAllowed(app, '/webhooks/:id/test', ['POST'])

  app.get(
    '/webhooks/:id/deliveries',
    {
      config,
      schema: {
        operationId: 'listWebhookDeliveries',
        summary:
          'Lists deliveries, newest first, with their latest attempt and next attempt, one page at a time',
        description:
          'When another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.',
        tags,
        params: Params,
        querystring: DeliveriesQuery,
        response: {
          200: { ...listOf('Delivery', 'A page of deliveries, newest first'), ...NextPage },
          ...errorResponses(errors.QUERY_INVALID, 401, errors.SCOPE_MISSING, errors.WEBHOOK_NOT_FOUND, 500),
        },
      },
    },
    async (request, reply) => {
      const query = deliveriesQuery(request.query as DeliveriesQueryText)
      const { id } = request.params as IdParams
      const page = await listDeliveries(store, id, query)
      if (page.next !== undefined) {
        const params = { limit: String(query.limit), status: query.status, after: page.next }
        reply.header('link', nextLink(`/webhooks/${id}/deliveries`, params))
      }
      return { data: page.deliveries.map(deliveryView) }
    },
  )
  methodNotAllowed(app, '/webhooks/:id/deliveries', ['GET', 'HEAD'])

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      config,
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Sends a delivery again now, or once an attempt in flight ends, with a fresh retry schedule',
        tags,
        params: DeliveryParams,
        response: {
          202: ref('Delivery', { description: 'The queued delivery' }),
          ...errorResponses(
            401,
            errors.SCOPE_MISSING,
            errors.WEBHOOK_NOT_FOUND,
            errors.DELIVERY_NOT_FOUND,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params as IdParams & { deliveryId: string }
      reply.code(202)
      return deliveryView(await retryDelivery(store, id, deliveryId))
    },
  )
  methodNotAllowed(app, '/webhooks/:id/deliveries/:deliveryId/retry', ['POST'])

  app.get(
    '/webhooks/:id/deliveries/:deliveryId/attempts',
    {
      config,
      schema: {
        operationId: 'listWebhookDeliveryAttempts',
        summary:
          "Lists a delivery's attempts, newest first, each with its time, duration, status or error and the start of the answer",
        description:
          'Paged as the deliveries are: when another page follows, a `Link: <…>; rel="next"` header gives its address; the last page has none.',
        tags,
        params: DeliveryParams,
        querystring: AttemptsQuery,
        response: {
          200: { ...listOf('DeliveryAttempt', 'A page of attempts, newest first'), ...NextPage },
          ...errorResponses(
            errors.QUERY_INVALID,
            401,
            errors.SCOPE_MISSING,
            errors.WEBHOOK_NOT_FOUND,
            errors.DELIVERY_NOT_FOUND,
            500,
          ),
        },
      },
    },
    async (request, reply) => {
      const query = attemptsQuery(request.query as { limit: number; after?: string })
      const { id, deliveryId } = request.params as IdParams & { deliveryId: string }
      const page = await listAttempts(store, id, deliveryId, query)
      if (page.next !== undefined) {
        const path = `/webhooks/${id}/deliveries/${deliveryId}/attempts`
        reply.header('link', nextLink(path, { limit: String(query.limit), after: page.next }))
      }
      return { data: page.attempts.map(attemptView) }
    },
  )
  methodNotAllowed(app, '/webhooks/:id/deliveries/:deliveryId/attempts', ['GET', 'HEAD'])

  // Replay and recover take the same {since} and answer alike: only what they queue differs.
  const queueAgainRoute = (
    action: 'replay' | 'recover',
    operationId: string,
    summary: string,
    body: typeof ReplayBody,
    queued: string,
    queue: (id: string, since: Date) => Promise<number>,
  ) => {
    app.post(
      `/webhooks/:id/${action}`,
      {
        config,
        preParsing: plainJsonOnly,
        schema: {
          operationId,
          summary,
          tags,
          params: Params,
          body,
          response: {
            202: ref('ReplayResult', { description: queued }),
            ...errorResponses(
              ...BODY_ERRORS,
              errors.REPLAY_SINCE_INVALID,
              401,
              errors.SCOPE_MISSING,
              errors.WEBHOOK_NOT_FOUND,
              500,
            ),
          },
        },
      },
      async (request, reply) => {
        const { since } = validateReplay(request.body as { since: string })
        reply.code(202)
        return { queued: await queue((request.params as IdParams).id, since) }
      },
    )
    methodNotAllowed(app, `/webhooks/:id/${action}`, ['POST'])
  }
  queueAgainRoute(
    'replay',
    'replayWebhook',
    'Sends again every event of the subscribed types since a time (same webhook-id)',
    ReplayBody,
    'How many deliveries were queued',
    (id, since) => replayEvents(store, id, since),
  )
  queueAgainRoute(
    'recover',
    'recoverWebhook',
    'Sends again the deliveries that ended failed since a time (same webhook-id), with a fresh retry schedule',
    RecoverBody,
    'How many failed deliveries were queued again',
    (id, since) => recoverDeliveries(store, id, since),
  )
}
