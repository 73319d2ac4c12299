import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { refuseUnknownRoute } from './errors.js'
import { corsHeaders, securityHeaders } from './security.js'

/** The headers every response carries: its request id, the security headers, and CORS's when on. */
export class AnswerHeaders {
  private readonly security = securityHeaders()
  private readonly cors: boolean

  constructor(private readonly corsOrigins: string[] | null | undefined) {
    this.cors = corsOrigins != null && corsOrigins.length > 0
  }

  /** The headers of a response written before Fastify has made a request of it. */
  raw(requestId: string, origin: string | undefined): Record<string, string> {
    return { 'x-request-id': requestId, ...this.security, ...corsHeaders(this.corsOrigins, origin) }
  }

  /** For a response no hook runs for (a URL the router cannot read). */
  stamp(request: FastifyRequest, reply: FastifyReply): void {
    reply.header('x-request-id', request.id)
    reply.headers(this.security)
    if (this.cors) reply.headers(corsHeaders(this.corsOrigins, request.headers.origin))
  }

  /**
   * The one hook every routed request runs first, doing at once what would otherwise take a hook
   * each: the request id and security headers go on the response, and an unknown route is refused before
   * its body is read (Fastify would otherwise read and parse it, and respond to a bad or large body with
   * a 400 or 413 where the route does not even exist). CORS's own hook runs after this one and never
   * sees such a request, so a 404 gets CORS's headers here: a script on an allowed origin reads it as
   * it reads any other error. `unknownRoute` is told of such a request, which has no route of its own
   * to hook.
   */
  install(app: FastifyInstance, unknownRoute: (request: FastifyRequest, reply: FastifyReply) => void): void {
    const security = this.security
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id)
      reply.headers(security)
      if (!request.is404) return done()
      if (this.cors) reply.headers(corsHeaders(this.corsOrigins, request.headers.origin))
      unknownRoute(request, reply)
      done(refuseUnknownRoute(request))
    })
  }
}
