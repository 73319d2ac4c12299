import type { ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { AppError, errors } from '../../errors.js'
import { seqOfCursor } from '../../events/change.js'
import {
  type StreamCredential,
  type StreamEndReason,
  StreamHub,
  type StreamHubOptions,
  type StreamSink,
} from '../../events/stream-hub.js'
import type { StreamTickets } from '../../events/stream-ticket.js'
import type { Metrics } from '../../metrics/registry.js'
import type { Store } from '../../store/types.js'
import type { BearerVerifier } from '../../tokens/bearer.js'
import type { Principal } from '../../tokens/service.js'
import { bearerToken } from '../auth.js'
import { sendError } from '../errors.js'
import { errorResponses } from '../schemas.js'
import { methodNotAllowed } from './method-not-allowed.js'

/** The hub's settings a test may change; the service runs on the defaults. */
export type StreamTimings = Pick<StreamHubOptions, 'heartbeatMs' | 'checkMs' | 'pollMs' | 'backlogBytes'>

export interface EventStreamRouteOptions {
  store: Store
  verifier: BearerVerifier
  tickets: StreamTickets
  metrics: Metrics
  maxStreams: number
  draining: () => boolean
  timings?: StreamTimings
  /**
   * Counts and logs a stream's response that ended without being sent in whole (its client went away,
   * or it was cut off): the framework does that only for a response that finished.
   */
  recordUnfinished: (request: FastifyRequest, reply: FastifyReply) => void
}

// Sent first, which also sends the status and headers at once: a browser's EventSource reconnects a
// second after the stream ends (a backlog or a draining instance ends it), not its default three.
const OPENING = 'retry: 1000\n\n'
/** How long a stream ended by the server may take to send what it holds before its connection is cut. */
const CLOSE_GRACE_MS = 1000
const RETRY_AFTER_S = '5'
/** A stream catching up reads its next page once no more than this waits to be sent. */
const DRAINED_BYTES = 64 * 1024
const END_REASONS: readonly StreamEndReason[] = [
  'client',
  'backlog',
  'revoked',
  'expired',
  'draining',
  'error',
]

const StreamQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      description:
        "Resume after this change's cursor, for a client that cannot send `Last-Event-ID` (which wins when both are given)",
    }),
  ),
  ticket: Type.Optional(
    Type.String({
      description:
        'A ticket from `POST /events/tickets`, in place of the bearer token (a browser’s EventSource)',
    }),
  ),
})
type StreamQueryText = { after?: string; ticket?: string }

const Ticket = Type.Object(
  {
    ticket: Type.String({ description: 'Opens streams as `GET /events/stream?ticket=…` until it expires' }),
    expiresAt: Type.String({ format: 'date-time' }),
  },
  { description: 'A stream ticket for the token that asked for it' },
)

export async function eventStreamRoutes(
  app: FastifyInstance,
  options: EventStreamRouteOptions,
): Promise<void> {
  const { store, verifier, tickets, metrics } = options
  const hub = new StreamHub({
    events: store.events,
    maxStreams: options.maxStreams,
    draining: options.draining,
    onOpen: () => metrics.eventStreams.inc(),
    onEnd: (reason) => {
      metrics.eventStreams.dec()
      metrics.eventStreamEnds.inc({ reason })
    },
    onError: (error) => app.log.warn({ err: error }, 'a change stream could not read the store'),
    ...options.timings,
  })
  // Each series exists from the start at 0, so a rate() over it has a baseline.
  for (const reason of END_REASONS) metrics.eventStreamEnds.inc({ reason }, 0)
  // Open streams would hold the shutdown up; their clients reconnect to another instance.
  app.addHook('preClose', (done) => {
    hub.close()
    done()
  })

  const ticketOf = (request: FastifyRequest) => (request.query as StreamQueryText).ticket
  app.get(
    '/events/stream',
    {
      config: {
        scope: 'events:read',
        otherCredential: (request) => {
          const ticket = ticketOf(request)
          return ticket === undefined ? undefined : tickets.verify(ticket)
        },
      },
      // Compressed, the events would wait in the compressor's buffer.
      compress: false,
      // A HEAD would open a stream whose body nobody is sent, held until the client leaves.
      exposeHeadRoute: false,
      schema: {
        operationId: 'streamChanges',
        summary: 'Every change as it is committed, as Server-Sent Events',
        description:
          'Each change is an event whose `id` is its cursor and whose `data` is the change. Without `Last-Event-ID` or `after` the stream starts with the next change. A `: heartbeat` comment comes every 15 s. A stream is ended when its client falls too far behind, its token is revoked or expires, or the instance drains: resume with `Last-Event-ID`. See docs/events.md.',
        tags: ['events'],
        querystring: StreamQuery,
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({ description: "Resume right after this change's cursor" }),
          ),
        }),
        security: [{ bearerAuth: ['events:read'] }, { streamTicket: [] }],
        response: {
          200: {
            description: 'The stream: `id: <cursor>` and `data: <change>` per change',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          ...errorResponses(
            errors.CURSOR_INVALID,
            401,
            errors.TICKET_INVALID,
            errors.TICKET_EXPIRED,
            errors.SCOPE_MISSING,
            errors.CURSOR_EXPIRED,
            500,
            errors.STREAMS_FULL,
          ),
        },
      },
    },
    async (request, reply) => {
      const afterSeq = resumePoint(request)
      if (afterSeq !== undefined && afterSeq < (await store.events.retentionHorizon())) {
        throw new AppError(errors.CURSOR_EXPIRED)
      }
      if (hub.full())
        return sendError(reply, errors.STREAMS_FULL, undefined, { 'retry-after': RETRY_AFTER_S })
      const credential =
        ticketOf(request) === undefined
          ? bearerCredential(verifier, request)
          : ticketCredential(tickets, store, request.principal as Principal)
      const body = new PassThrough()
      body.write(OPENING)
      const res = reply.raw
      const stop = hub.open(responseSink(body, res), credential, afterSeq)
      let errored = false
      res.once('error', () => {
        errored = true
      })
      res.once('close', () => {
        stop()
        if (!res.writableFinished && !errored) options.recordUnfinished(request, reply)
      })
      reply
        .type('text/event-stream')
        .header('cache-control', 'no-store')
        // Proxies that buffer responses (nginx) pass this one on as it comes.
        .header('x-accel-buffering', 'no')
      return reply.send(body)
    },
  )
  methodNotAllowed(app, '/events/stream', ['GET'])

  app.post(
    '/events/tickets',
    {
      config: { scope: 'events:read' },
      schema: {
        operationId: 'createStreamTicket',
        summary: 'A short-lived ticket that opens change streams where no Authorization header can be sent',
        description:
          'For a browser’s `EventSource`: `new EventSource("/events/stream?ticket=…")`. The ticket opens streams for a minute (no longer than the token lives), with the token’s scopes; the streams end when the token is revoked or expires.',
        tags: ['events'],
        response: {
          200: Ticket,
          ...errorResponses(401, errors.SCOPE_MISSING, 500),
        },
      },
    },
    async (request) => {
      const issued = await tickets.issue(request.principal as Principal)
      return { ticket: issued.ticket, expiresAt: issued.expiresAt.toISOString() }
    },
  )
  methodNotAllowed(app, '/events/tickets', ['POST'])
}

/** Where the stream starts: after `Last-Event-ID` (a reconnecting EventSource's), else after `after`. */
function resumePoint(request: FastifyRequest): number | undefined {
  const header = request.headers['last-event-id']
  if (typeof header === 'string' && header !== '') {
    const seq = seqOfCursor(header)
    if (seq === undefined) {
      throw new AppError(
        errors.CURSOR_INVALID,
        'The Last-Event-ID header must be the id of a change this service sent.',
      )
    }
    return seq
  }
  const after = (request.query as StreamQueryText).after
  if (after === undefined) return undefined
  const seq = seqOfCursor(after)
  if (seq === undefined) {
    throw new AppError(errors.CURSOR_INVALID, "The query parameter after must be a change's cursor.")
  }
  return seq
}

/** A stream opened with a bearer token lives as long as the token is accepted, verified as every request is. */
function bearerCredential(verifier: BearerVerifier, request: FastifyRequest): StreamCredential {
  const token = bearerToken(request.headers.authorization) as string
  return {
    key: token,
    expiresAt: (request.principal as Principal).expiresAt,
    check: () => {
      if (verifier.verifyCached(token)) return
      return verifier.verify(token).then(() => {})
    },
  }
}

/**
 * A stream opened with a ticket lives as long as the ticket's token: an opaque token's row is read
 * again whenever any token has been revoked or rolled (the revocation epoch moved), and from the start.
 */
function ticketCredential(tickets: StreamTickets, store: Store, principal: Principal): StreamCredential {
  let epoch: number | undefined
  return {
    key: `ticket ${principal.tokenId}`,
    expiresAt: principal.expiresAt,
    check: () => {
      const now = store.tokens.revocationEpoch()
      if (now === epoch) return
      return tickets.checkToken(principal).then(() => {
        epoch = now
      })
    },
  }
}

function responseSink(body: PassThrough, res: ServerResponse): StreamSink {
  const backlog = () => body.writableLength + body.readableLength + res.writableLength
  return {
    write: (chunk) => {
      body.write(chunk)
    },
    backlog,
    drained: () =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!res.destroyed && backlog() > DRAINED_BYTES) return
          res.off('drain', check)
          res.off('close', check)
          resolve()
        }
        res.on('drain', check)
        res.on('close', check)
        check()
      }),
    close: (reason: StreamEndReason) => {
      if (reason === 'client') return
      // A reader that far behind would take longer still to be sent what is waiting: it resumes.
      if (reason === 'backlog') {
        res.destroy()
        return
      }
      body.end()
      // A draining instance's client reconnects on a new connection, which the balancer sends elsewhere.
      if (reason === 'draining') res.once('finish', () => res.socket?.end())
      const cut = setTimeout(() => res.destroy(), CLOSE_GRACE_MS)
      res.once('close', () => clearTimeout(cut))
    },
  }
}
