import { createHmac } from 'node:crypto'
import { SECRET_PREFIX } from './model.js'

function signature(secret: string, content: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`
}

/**
 * The Standard Webhooks headers for one message: `webhook-signature` holds one `v1,` signature
 * (base64 HMAC-SHA256 of `id.timestamp.body`) per secret, space separated, so a receiver that still
 * has the previous secret after a rotation keeps verifying.
 */
export function signedHeaders(
  messageId: string,
  body: string,
  secrets: string[],
  at: Date = new Date(),
): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000).toString()
  const content = `${messageId}.${timestamp}.${body}`
  return {
    'webhook-id': messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((s) => signature(s, content)).join(' '),
  }
}
