import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import { logsAt } from '../log.js'

/**
 * Per-request lines go to debug: at the default level a request costs no log write, and failures
 * that matter (5xx) are logged by the error handler at error level.
 */
export class QuietRequestLog extends LogController {
  override incomingRequest(): void {}
  /** `metadata.ms` where the reply's own clock never ran (a response given before routing). */
  override requestCompleted(
    _error: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    // The line's object is not even built at the default level.
    if (!logsAt(request.log, 'debug')) return
    request.log.debug(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: typeof metadata?.ms === 'number' ? metadata.ms : reply.elapsedTime,
        // The client's address, taken from X-Forwarded-For only behind a --trust-proxy.
        ip: request.ip,
      },
      'request completed',
    )
  }

  /**
   * A streamed response cut short (a change stream whose client went away) is how such a response
   * usually ends: its route counts and logs it as a completed request (routes/event-stream.ts).
   */
  override streamError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE') return
    super.streamError(error, request, reply)
  }
}
