import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/**
 * An id that cannot be a secret: a token's secret is 43 characters, and an id of at most 36 (a UUID's
 * length; ULIDs, nanoids and the hex ids proxies make are shorter) cannot hold one.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,36}$/

/**
 * The client's X-Request-Id when it is a safe one, else a new id. It is sent back in a response
 * header and written in log lines, which proxies and browsers' tools keep as they see fit: a secret,
 * or anything long enough to be one, is never taken.
 */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id']
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID()
}
