import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import {
  guardedLookup,
  isForbiddenAddress,
  plainLookup,
  type Resolver,
  systemResolver,
} from './url-safety.js'

export interface SenderOptions {
  timeoutMs: number
  /** Allows loopback, private and link-local targets (local development and tests). */
  allowPrivateUrls: boolean
  resolve?: Resolver
  /** Idle keep-alive sockets kept open per receiver host, for its next attempts. */
  idleSocketsPerHost?: number
}

export interface SendOutcome {
  /** The receiver's HTTP status; null when no answer came (timeout, refused, forbidden). */
  statusCode: number | null
  error: string | null
  durationMs: number
}

const USER_AGENT = 'plantstore-webhooks/1'

/**
 * The most of an answer's body that is read. The status is the outcome; the body is read only so
 * that the socket can carry the next attempt. A receiver may send any amount, and reading it all
 * would keep this thread, which sends every subscription's attempts, busy until the timeout.
 */
const MAX_ANSWER_BODY_BYTES = 64 * 1024

/**
 * POSTs signed messages to receivers. The address a socket connects to is checked by the `lookup`
 * (or, for a literal IP in the URL, before connecting), redirects are never followed (a 3xx is just a
 * failed attempt), and every attempt ends by `timeoutMs`, however slowly the receiver answers.
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
      timeout: 60_000,
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
      const finish = (statusCode: number | null, error: string | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ statusCode, error, durationMs: elapsed() })
      }
      let target: URL
      try {
        target = new URL(url)
      } catch {
        finish(null, 'invalid URL')
        return
      }
      const literal = target.hostname.replace(/^\[|\]$/g, '')
      if (!this.options.allowPrivateUrls && isIP(literal) !== 0 && isForbiddenAddress(literal)) {
        finish(null, `refused: ${literal} is a forbidden address`)
        return
      }
      const isHttps = target.protocol === 'https:'
      const request = (isHttps ? https : http).request(target, {
        method: 'POST',
        agent: isHttps ? this.agents.https : this.agents.http,
        lookup: this.lookup,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body).toString(),
          'user-agent': USER_AGENT,
        },
        signal,
      })
      let answered: number | undefined
      timer = setTimeout(() => {
        // The status is the answer and the body is ignored: a receiver that answered in time and
        // still trickles its body has answered. The socket goes, as for a body too long to read.
        if (answered !== undefined) finish(answered, null)
        request.destroy(new Error(`timed out after ${this.options.timeoutMs} ms`))
      }, this.options.timeoutMs)
      request.on('response', (response) => {
        answered = response.statusCode
        // The body is not used; reading it to the end lets the socket be reused, unless it is long.
        let bodyBytes = 0
        response.on('data', (chunk: Buffer) => {
          bodyBytes += chunk.length
          if (bodyBytes <= MAX_ANSWER_BODY_BYTES) return
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
        finish(response.statusCode ?? null, 'answered by switching protocols')
      })
      request.on('close', () =>
        finish(
          answered ?? null,
          answered === undefined ? 'connection closed without an answer' : 'connection closed mid-answer',
        ),
      )
      request.on('error', (error: Error & { code?: string }) => {
        const reason = error.name === 'ForbiddenAddressError' ? `refused: ${error.message}` : error.message
        finish(null, reason || error.code || 'connection failed')
      })
      request.end(body)
    })
  }

  close(): void {
    this.agents.http.destroy()
    this.agents.https.destroy()
  }
}
