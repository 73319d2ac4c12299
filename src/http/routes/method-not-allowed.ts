import { METHODS as NODE_METHODS } from 'node:http'
import type { FastifyInstance, FastifySchema, HTTPMethods } from 'fastify'
import { AppError, errors } from '../../errors.js'

// Every method Node's parser lets through (PROPFIND, PURGE, M-SEARCH…), not only those Fastify knows:
// on a known path each is a wrong method, not a wrong path. CONNECT never reaches a route (app.ts).
// OPTIONS is one too: with CORS on, its hook responds to a preflight before any route's hook runs.
const METHODS = NODE_METHODS.filter((m) => m !== 'CONNECT') as HTTPMethods[]

/** Lets routes be declared for the methods Fastify does not know by default; call before any route. */
export function recognizeEveryMethod(app: FastifyInstance): void {
  for (const method of METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method)
}

/**
 * Responds to the methods a path does not support with 405 and an `Allow` header, instead of a 404 that
 * would suggest the path itself is wrong. Registered without authentication: 405 wins over 401.
 */
export function methodNotAllowed(app: FastifyInstance, url: string, allowed: HTTPMethods[]): void {
  const others = METHODS.filter((m) => !allowed.includes(m))
  if (others.length === 0) return
  const allow = allowed.join(', ')
  const refuse = (method: string) =>
    new AppError(errors.METHOD_NOT_ALLOWED, `${method} is not allowed here; use ${allow}.`, { allow })
  app.route({
    method: others,
    url,
    exposeHeadRoute: false,
    schema: { hide: true } as FastifySchema,
    config: { public: true },
    // An error's few bytes are never worth compressing.
    compress: false,
    // Refused in onRequest, before a body is read: 405 wins over a bad or oversized body too.
    onRequest: (request, _reply, done) => done(refuse(request.method)),
    handler: async (request) => {
      throw refuse(request.method)
    },
  })
}
