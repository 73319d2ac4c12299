import type { IncomingMessage, ServerResponse } from 'node:http'
import cors from '@fastify/cors'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import helmet from 'helmet'

const HELMET_OPTIONS: Parameters<typeof helmet>[0] = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      // Swagger UI sets inline style attributes.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
    },
  },
  // An API response is fetched, not embedded; CORS (when enabled) decides who may read it.
  crossOriginResourcePolicy: { policy: 'same-site' },
  crossOriginEmbedderPolicy: false,
  // Browsers that know only X-Frame-Options are told what frame-ancestors 'none' tells the others.
  xFrameOptions: { action: 'deny' },
  // Headers for old browsers' page features (IE downloads, Flash policies, DNS prefetch, the retired
  // XSS auditor, agent clusters) say nothing about a JSON response; each would cost bytes on every one.
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
}

/**
 * Response headers for a JSON API, set on every response. The content security policy is strict but
 * lets a documentation page served from this origin (scripts, styles and images of a bundled Swagger UI)
 * work; it loads nothing from elsewhere and cannot be framed. helmet computes them once, here: the
 * Fastify plugin would rebuild its middleware, and reparse the policy, on every request.
 */
export function securityHeaders(): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: unknown) => {
      headers[name.toLowerCase()] = String(value)
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()]
    },
  }
  helmet(HELMET_OPTIONS)({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return headers
}

// Every request header the service reads: a script's own If-None-Match (responses carry
// Cache-Control: no-store, so the browser's cache never sends one for it) needs a preflight like the rest.
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'Last-Event-ID',
  'X-Request-Id',
]
/**
 * The documented response headers a browser may read on another origin (it hides all but a few
 * safelisted ones otherwise): a client needs the challenge of a 401, the next page and the count of a
 * listing, and whether a create was replayed as much as the ETag, and which media types a refused
 * PATCH may use.
 */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'ETag',
  'Location',
  'Link',
  'X-Total-Count',
  'Allow',
  'Accept-Patch',
  'WWW-Authenticate',
  'Idempotent-Replayed',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
]

/**
 * The headers the CORS plugin puts on a response while CORS is on (none when it is off): Vary, because
 * a response to a browser would differ, the request's origin when it is an allowed one, and the exposed
 * headers. For the responses the plugin's hook never runs for: those given before routing, such as a URL
 * the router cannot read, which a script on an allowed origin must be able to read as it reads any
 * other error.
 */
export function corsHeaders(
  origins: string[] | null | undefined,
  origin: string | undefined,
): Record<string, string> {
  if (!origins || origins.length === 0) return {}
  const headers: Record<string, string> = { vary: 'Origin' }
  if (origin !== undefined && origins.includes(origin)) headers['access-control-allow-origin'] = origin
  headers['access-control-expose-headers'] = CORS_EXPOSED_HEADERS.join(', ')
  return headers
}

/** Off unless origins are configured: then only those browser origins may call, and read responses. */
export async function installCors(app: FastifyInstance, origins: string[] | null | undefined): Promise<void> {
  if (!origins || origins.length === 0) return
  const preflight = {
    origin: origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
  }
  // Only an OPTIONS that names a method in Access-Control-Request-Method is a preflight (Fetch, CORS
  // protocol). The plugin would respond to any other with a 204 too, on a path no route has and without
  // Allow; routed instead, it gets the 404, or the 405 with Allow, that it gets without CORS
  // (RFC 9110 §9.3.7).
  const other = { ...preflight, preflight: false }
  await app.register(cors, {
    delegator: (request, callback) =>
      callback(null, request.headers['access-control-request-method'] === undefined ? other : preflight),
  })
}

/**
 * Load shedding: while the event loop lags more than `maxEventLoopDelayMs`, requests are refused at
 * once with 503 and Retry-After (the one error handler gives it the Error shape) instead of queueing
 * until every client times out. Liveness (/healthz) still responds; readiness turns 503 with the rest,
 * which is what makes a load balancer send traffic elsewhere.
 */
export async function installLoadShedding(app: FastifyInstance, maxEventLoopDelayMs: number): Promise<void> {
  if (maxEventLoopDelayMs <= 0) return
  // The lag is the mean over one sample window; a window of only a few 10 ms ticks could hold no
  // sample at all, which the plugin reads as infinite lag.
  const sampleInterval = Math.min(1000, Math.max(100, maxEventLoopDelayMs))
  // The plugin measures from its registration, so its first windows hold the process's own start
  // (schemas compiled, routes built), which on a busy machine lags past the limit though nothing is
  // queued. Only the lag two windows after ready counts.
  let measuredFrom = Number.POSITIVE_INFINITY
  app.addHook('onReady', (done) => {
    measuredFrom = performance.now() + 2 * sampleInterval
    done()
  })
  await app.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    sampleInterval,
    pressureHandler: async (_request, reply) => {
      if (performance.now() < measuredFrom) return
      reply.header('retry-after', '1')
      throw Object.assign(new Error('Service Unavailable'), { code: 'FST_UNDER_PRESSURE', statusCode: 503 })
    },
  })
}
