import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { type CatalogEntry, errors } from '../errors.js'
import { SCOPES, type Scope } from '../tokens/scopes.js'
import { TEST_EVENT_TYPE } from '../webhooks/model.js'
import { LOSSLESS_RESPONSES_JS } from './docs-page.js'
import { methodNotAllowed } from './routes/method-not-allowed.js'
import { withErrorResponses } from './schemas.js'

/** The contract's own version (plant-store-spec.md), not the package's. */
export const CONTRACT_VERSION = '1.0.0'

const SCOPE_TEXT: Record<Scope, string> = {
  'plants:read': 'list and read plants',
  'plants:write': 'create, replace, change and delete plants',
  'webhooks:manage': 'manage webhook subscriptions',
  'metrics:read': 'read metrics',
  'tokens:manage': 'issue, list, roll and revoke tokens, with no more scopes than its own',
  'events:read': 'read the change feed and its live stream',
}

function catalogMarkdown(): string {
  const rows = Object.entries(errors).map(
    ([name, e]) => `| ${e.code} | ${e.status} | \`${name}\` | ${e.message} |`,
  )
  return ['| error | status | name | message |', '|---|---|---|---|', ...rows].join('\n')
}

const DESCRIPTION = `A plant store: create, list, read, replace, change and delete plants.

Ids are signed 64-bit integers, exact over their whole range: clients must parse them without going
through a double (this page's try-it panel shows ids past 2^53 rounded; the raw response is exact).

Every operation except the public documents needs a bearer token (\`Authorization: Bearer pst_…\`),
issued by the operator with \`plantstore token create\` or over HTTP with \`POST /tokens\`. Scopes: ${SCOPES.map((s) => `\`${s}\` (${SCOPE_TEXT[s]})`).join(', ')}.

Every answer carries \`X-Request-Id\` and the security headers (\`Content-Security-Policy\`,
\`Cross-Origin-Opener-Policy\`, \`Cross-Origin-Resource-Policy\`, \`Referrer-Policy\`,
\`Strict-Transport-Security\`, \`X-Content-Type-Options\`, \`X-Frame-Options\`); every authenticated
answer carries \`Cache-Control: no-store\`, and while a rate limit applies (the operator's, or the token's own) also
\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`.
Some answers are given before an operation runs, and close the connection. Those a request for an
operation can get are listed under every operation: 400 (40000) for a request the server will not
read (a transfer coding other than \`chunked\`, no \`Host\`, two or an invalid one, two
\`Authorization\` or \`Content-Type\` fields, an HTTP version other than 1.1 and 1.0), 417 (41701) for an \`Expect\` other than \`100-continue\`, 503 (50301) with
\`Retry-After\` while the process shuts down and, where the operation takes a body, 408 (40801) when
the body stops arriving. The others come where no operation was asked for, or before the server has
read which one was, so no operation lists them: 404 (40401) for an unknown path, 405 (40501) with
\`Allow\` for a wrong method, 400 (40000) for a request line that does not parse, a path that does not
decode or a \`CONNECT\`, 408 (40801) for headers that do not arrive in time, 414 (41401) for a URL past
the header limit and 431 (43101) for headers past it.

Every failure answers \`{"error": <code>, "message": "…"}\` with a stable code from this catalog
(also in \`x-error-codes\`):

${catalogMarkdown()}`

/**
 * The OpenAPI 3.1 document, generated from the routes' own schemas, and the docs page. Both are
 * public. Registered before the routes, so that every route is collected.
 */
export async function openApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plant Store',
        version: CONTRACT_VERSION,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: the service's own origin, wherever it is deployed, so that generated clients and
      // the docs page's try-it panel have a base URL without being told one.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      tags: [
        { name: 'plants', description: 'The plant resource' },
        { name: 'webhooks', description: 'Subscriptions to plant events, and their deliveries' },
        { name: 'tokens', description: 'Bearer tokens: issue, list, roll and revoke' },
        {
          name: 'events',
          description: 'Every change on record: the change feed in commit order and its live stream',
        },
        { name: 'operations', description: 'Health checks and the published contract' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `An opaque token issued by \`plantstore token create\` or \`POST /tokens\`. Each operation lists the scope it needs: ${SCOPES.join(', ')}.`,
          },
          streamTicket: {
            type: 'apiKey',
            in: 'query',
            name: 'ticket',
            description:
              'A short-lived ticket from `POST /events/tickets`, for `GET /events/stream` alone: a browser’s EventSource cannot send a bearer token.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      // Shared schemas keep their own names as components: NewPlant, Plant, StoredPlant, Error…
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    transform: ({ schema, url, route }) => ({
      url,
      schema: withOperationalErrors(withSecurity(schema, route)),
    }),
    transformObject: (documents) =>
      ({
        ...(documents as { openapiObject: object }).openapiObject,
        webhooks: eventWebhooks(),
        'x-error-codes': Object.entries(errors).map(([name, e]) => ({
          code: e.code,
          status: e.status,
          name,
          message: e.message,
        })),
      }) as ReturnType<SwaggerTransformObject>,
  })

  app.get('/openapi.json', { schema: { hide: true } as FastifySchema, config: { public: true } }, async () =>
    app.swagger(),
  )

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No validator badge: it would send the document to validator.swagger.io.
    uiConfig: { deepLinking: true, validatorUrl: null },
    // The tab and a bookmark name this service, not the tool that renders its document; the plugin
    // shows each response's ids as sent, where Swagger UI alone rounds them (docs-page.ts).
    theme: {
      title: 'Plant Store API',
      js: [{ filename: 'lossless-responses.js', content: LOSSLESS_RESPONSES_JS }],
    },
    // Its own redirect of /docs/static/index.html keeps the path whole only without a query string:
    // /docs/static/index.html?x answered a redirect to itself, forever. The page is /docs. The page's
    // script finds the document by appending ./json to the whole address, query string included:
    // /docs?x fetched /docs?x/./json (the page again) and showed no operation. Swagger UI reads
    // nothing from the query string, so it is dropped (the browser keeps the #fragment).
    uiHooks: {
      onRequest: (request, reply, done) => {
        const url = request.routeOptions.url
        const page = url === '/docs' || url === '/docs/'
        if (url !== '/docs/static/index.html' && !(page && request.url.includes('?'))) return done()
        reply.redirect('/docs')
      },
    },
    // Every asset comes from this service: the page works offline and loads nothing from elsewhere.
    // No upgrade-insecure-requests, so try-it calls to a plain-HTTP instance stay on HTTP. Swagger UI
    // embeds no fonts (its images are data: URLs) and submits no form anywhere: default-src does not
    // cover form-action, so it is closed explicitly.
    staticCSP:
      "default-src 'self'; base-uri 'self'; connect-src 'self'; form-action 'none'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'",
  })
  // The folder itself would be Swagger UI's stock index.html, whose initializer loads ./json from
  // /docs/static/ (a 404): a page without the document. The page is /docs.
  app.get(
    '/docs/static/',
    { schema: { hide: true } as FastifySchema, config: { public: true } },
    (_request, reply) => reply.redirect('/docs'),
  )
  for (const url of ['/openapi.json', '/docs', '/docs/*']) methodNotAllowed(app, url, ['GET', 'HEAD'])
}

/**
 * Answers the server gives an operation's request before the operation runs, whatever its own rules
 * say: 400 (40000) for a request it will not read (a transfer coding other than chunked, no Host, two
 * or an invalid one, two Authorization or Content-Type fields, another HTTP version), 417 for an `Expect` other than 100-continue, 503
 * while the process shuts down (liveness too), and 408 while a body the operation reads stalls.
 */
const PRE_ROUTE_ERRORS = [errors.BAD_REQUEST, errors.EXPECTATION_FAILED, errors.UNAVAILABLE]

/**
 * Answers any operation may give whatever its own rules say: those given before it runs, and those
 * set by the operator: 503 while load is shed and 429 past the rate limit (only behind
 * authentication, where the limit is counted).
 */
function withOperationalErrors(schema: FastifySchema): FastifySchema {
  const base = schema as FastifySchema & {
    response?: Record<string, unknown>
    hide?: boolean
    security?: unknown[]
  }
  if (!base.response || base.hide) return base
  const extra: Array<number | CatalogEntry> = [...PRE_ROUTE_ERRORS]
  if (base.body !== undefined) extra.push(errors.REQUEST_TIMEOUT)
  if (base.security?.length !== 0) extra.push(errors.RATE_LIMITED)
  return { ...base, response: withErrorResponses(base.response, ...extra) } as FastifySchema
}

/** What subscribers receive: one Standard Webhooks message per plant event (OpenAPI 3.1 `webhooks`). */
function eventWebhooks(): Record<string, unknown> {
  const messages: Record<string, { summary: string; schema: string }> = {
    'plant.created': { summary: 'A plant was created', schema: 'PlantEvent' },
    'plant.updated': { summary: 'A plant was replaced or changed', schema: 'PlantEvent' },
    'plant.deleted': { summary: 'A plant was deleted (data: the plant as it was)', schema: 'PlantEvent' },
    // Not a subscribable type, but a receiver gets it whenever POST /webhooks/{id}/test is called.
    [TEST_EVENT_TYPE]: {
      summary: 'A test message, sent on request to one subscription',
      schema: 'TestEvent',
    },
  }
  const signed = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => ({
    name,
    in: 'header',
    required: true,
    schema: { type: 'string' },
  }))
  return Object.fromEntries(
    Object.entries(messages).map(([type, { summary, schema }]) => [
      type,
      {
        post: {
          operationId: `${type.replace('.', '_')}_event`,
          summary,
          tags: ['webhooks'],
          // Sent by the service, signed, with no bearer token: the document-wide bearer requirement
          // would otherwise tell receivers to demand one.
          security: [],
          description:
            'POSTed to every subscription of this type (a test message: to the subscription it was asked for), signed per Standard Webhooks (see docs/webhooks.md). Answer 2xx within the timeout; anything else is retried.',
          parameters: signed,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
          },
          responses: { '200': { description: 'Received (any 2xx will do)' } },
        },
      },
    ]),
  )
}

/** Public routes need nothing; the others the bearer token with the route's scope, if it has one. */
function withSecurity(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema {
  const config = route.config as { scope?: string; public?: boolean } | undefined
  const base = (schema ?? {}) as FastifySchema & { security?: unknown }
  if (base.security !== undefined) return base
  if (config?.public) return { ...base, security: [] } as FastifySchema
  return { ...base, security: [{ bearerAuth: config?.scope ? [config.scope] : [] }] } as FastifySchema
}
