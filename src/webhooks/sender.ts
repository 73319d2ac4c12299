import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import { ANSWER_BODY_KEPT_BYTES } from './model.js'
import { guardedLookup, plainLookup, type Resolver, refusedHost, systemResolver } from './url-safety.js'

export interface SenderOptions {
  timeoutMs: number
  /** Allows loopback, private and link-local targets (local development and tests). */
  allowPrivateUrls: boolean
  resolve?: Resolver
  /** Idle keep-alive sockets kept open per receiver host, for its next attempts. */
  idleSocketsPerHost?: number
}

export interface SendOutcome {
  /** The receiver's HTTP status; null when no response came (timeout, refused, forbidden). */
  statusCode: number | null
  error: string | null
  durationMs: number
  /** The first ANSWER_BODY_KEPT_BYTES of the response's body as they came; null when no response came. */
  body: Buffer | null
  /** Whether more of the body came than `body` holds. */
  bodyTruncated: boolean
}

const USER_AGENT = 'plantstore-webhooks/1'

/**
 * The most of a response's body that is read. The status is the outcome; past its first bytes (kept
 * with the attempt), the body is read only so that the socket can carry the next attempt. A receiver
 * may send any amount, and reading it all would keep this thread, which sends every subscription's attempts, busy until the timeout.
 */
const MAX_RESPONSE_BODY_BYTES = 64 * 1024

/**
 * How long an idle kept-alive socket waits for a receiver's next attempt. A receiver may close an
 * idle connection at any time, and when it does so just as the next attempt reuses it, that attempt
 * fails before any response (ECONNRESET, "socket hang up"). Node's agent already keeps a socket for
 * one second less than a `Keep-Alive: timeout=N` response header announces (and not at all for N ≤ 1),
 * and drops a pooled socket whose close it has seen; but many receivers announce nothing, and
 * common ones close idle connections after 5 s (Node's own server default) to 60 s. 4 s, as undici
 * keeps them, stays under most, so such races are rare; `send` makes the rare one harmless. (The
 * agent also sets this as the socket's inactivity timeout while an attempt is on it, but destroys
 * only idle sockets on it: a slower response is bounded by the attempt's own timeout alone.)
 */
const IDLE_SOCKET_MS = 4_000

/** Errors that say the connection broke, rather than that the attempt was ended on purpose. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT'])

/**
 * POSTs signed messages to receivers. The address a socket connects to is checked by the `lookup`
 * (or, for a literal IP in the URL, before connecting), redirects are never followed (a 3xx is just a
 * failed attempt), and every attempt ends by `timeoutMs`, however slowly the receiver responds.
 *
 * An attempt that reused a kept-alive socket and lost it before any byte of a response came is sent
 * again at once, within the same attempt and its timeout, on a new connection of its own: the
 * receiver most likely closed the idle connection just as it was reused, and had not seen the
 * request. Should it have seen it after all, it gets the message twice, with the same `webhook-id`
 * to deduplicate on, as at-least-once delivery allows. A new connection is never sent on again, so
 * a receiver that drops every connection fails the attempt as before.
 */
export class WebhookSender {
  private readonly lookup: LookupFunction
  private readonly agents: { http: http.Agent; https: https.Agent }

  constructor(private readonly options: SenderOptions) {
    const resolve = options.resolve ?? systemResolver
    this.lookup = options.allowPrivateUrls ? plainLookup(resolve) : guardedLookup(resolve)
    // No cap on sockets in use: the dispatcher bounds the attempts in flight (per subscription and in
    // all). An agent's cap would queue attempts beyond it, to subscriptions that share a host, while
    // their timeouts ran: one that waited for a socket would fail without its receiver having been
    // slow, or even having seen it.
    const agentOptions = {
      keepAlive: true,
      maxFreeSockets: options.idleSocketsPerHost ?? 16,
      timeout: IDLE_SOCKET_MS,
    }
    this.agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }
  }

  send(
    url: string,
    headers: Record<string, string>,
    body: string,
    signal?: AbortSignal,
  ): Promise<SendOutcome> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    return new Promise((resolve) => {
      let settled = false
      let timer: NodeJS.Timeout | undefined
      // The response's first bytes, of the request that gave the response (a superseded one gave none).
      let kept: Buffer[] = []
      let keptBytes = 0
      let bodyTruncated = false
      let respondedStatus: number | undefined
      const finish = (statusCode: number | null, error: string | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        const body = statusCode === null ? null : Buffer.concat(kept, keptBytes)
        resolve({ statusCode, error, durationMs: elapsed(), body, bodyTruncated })
      }
      let target: URL
      try {
        target = new URL(url)
      } catch {
        finish(null, 'invalid URL')
        return
      }
      const refused = this.options.allowPrivateUrls ? undefined : refusedHost(target.hostname)
      if (refused !== undefined) {
        finish(null, `refused: ${refused}`)
        return
      }
      const isHttps = target.protocol === 'https:'
      const options: http.RequestOptions = {
        method: 'POST',
        lookup: this.lookup,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body).toString(),
          'user-agent': USER_AGENT,
        },
        signal,
      }
      let current: http.ClientRequest | undefined
      let expired = false
      timer = setTimeout(() => {
        expired = true
        // The status is the outcome, and the body only a note on it: a receiver that responded in time
        // and still trickles its body has responded, and what came of the body is kept. The socket goes,
        // as for a body too long to read.
        if (respondedStatus !== undefined) finish(respondedStatus, null)
        current?.destroy(new Error(`timed out after ${this.options.timeoutMs} ms`))
      }, this.options.timeoutMs)

      const start = (fresh: boolean) => {
        const request = (isHttps ? https : http).request(target, {
          ...options,
          // `agent: false` makes a connection for this request alone (through the same `lookup`), so
          // the second try cannot be handed another stale socket from the pool.
          agent: fresh ? false : isHttps ? this.agents.https : this.agents.http,
        })
        current = request
        // A superseded request's late events (its 'close' after the 'error' that superseded it) are
        // no longer this attempt's.
        const live = () => request === current
        let bytesReadBefore = 0
        request.on('socket', (socket) => {
          bytesReadBefore = socket.bytesRead
        })
        request.on('response', (response) => {
          if (!live()) return
          respondedStatus = response.statusCode
          // Only its start is kept, for the attempt's record; reading the rest to the end lets the
          // socket be reused, unless it is long.
          let bodyBytes = 0
          kept = []
          keptBytes = 0
          bodyTruncated = false
          response.on('data', (chunk: Buffer) => {
            bodyBytes += chunk.length
            if (keptBytes < ANSWER_BODY_KEPT_BYTES) {
              const part = chunk.subarray(0, ANSWER_BODY_KEPT_BYTES - keptBytes)
              // A copy: a slice would keep the whole chunk alive until the outcome is recorded.
              kept.push(Buffer.from(part))
              keptBytes += part.length
            }
            if (bodyBytes > keptBytes) bodyTruncated = true
            if (bodyBytes <= MAX_RESPONSE_BODY_BYTES) return
            finish(response.statusCode ?? null, null)
            request.destroy()
          })
          response.on('end', () => finish(response.statusCode ?? null, null))
          response.on('error', (error) => finish(response.statusCode ?? null, error.message))
        })
        // Unasked for, a 101 makes Node drop the socket with neither an error nor an end, and the
        // timeout's destroy() of a request already destroyed emits nothing: the attempt would never
        // settle, and its slot among the attempts in flight would stay taken until the process stops.
        request.on('upgrade', (response, socket) => {
          socket.destroy()
          if (live()) finish(response.statusCode ?? null, 'answered by switching protocols')
        })
        request.on('close', () => {
          if (!live()) return
          finish(
            respondedStatus ?? null,
            respondedStatus === undefined
              ? 'connection closed without an answer'
              : 'connection closed mid-answer',
          )
        })
        request.on('error', (error: Error & { code?: string }) => {
          if (!live() || settled) return
          const lostReusedSocket =
            !fresh &&
            request.reusedSocket &&
            respondedStatus === undefined &&
            (request.socket?.bytesRead ?? bytesReadBefore) === bytesReadBefore &&
            CONNECTION_LOST.has(error.code ?? '') &&
            !expired &&
            !signal?.aborted
          if (lostReusedSocket) {
            start(true)
            return
          }
          const reason = error.name === 'ForbiddenAddressError' ? `refused: ${error.message}` : error.message
          finish(null, reason || error.code || 'connection failed')
        })
        request.end(body)
      }
      start(false)
    })
  }

  close(): void {
    this.agents.http.destroy()
    this.agents.https.destroy()
  }
}
