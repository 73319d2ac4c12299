import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { holdsToken } from '../tokens/format.js'

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The client's X-Request-Id when it is a sane one, else a new id. A token is never taken as one: it
 * would be sent back in a response header, which proxies and browsers' tools log as they see fit.
 */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) && !holdsToken(incoming)
    ? incoming
    : randomUUID()
}
