import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ANSWER_BODY_KEPT_BYTES } from '../../src/webhooks/model.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import type { Resolver } from '../../src/webhooks/url-safety.js'
import { type RawAnswer, type RawReceiver, startRawReceiver } from '../helpers/raw-receiver.js'

describe('webhook sender on kept-alive connections', () => {
  let receiver: RawReceiver | undefined
  let sender: WebhookSender | undefined
  afterEach(async () => {
    sender?.close()
    await receiver?.close()
    sender = undefined
    receiver = undefined
  })

  /** A sender whose host name goes through a resolver that counts its lookups. */
  async function setUp(plan: (connection: number, request: number) => RawAnswer, timeoutMs = 5000) {
    receiver = await startRawReceiver(plan)
    const lookups: string[] = []
    const resolve: Resolver = async (host) => {
      lookups.push(host)
      return [{ address: '127.0.0.1', family: 4 }]
    }
    sender = new WebhookSender({ timeoutMs, allowPrivateUrls: true, resolve })
    const url = `http://receiver.example:${receiver.port}/hook`
    const send = (id: string) => (sender as WebhookSender).send(url, { 'webhook-id': id }, '{"type":"x"}')
    return { receiver, lookups, send }
  }

  for (const drop of ['close', 'reset'] as const) {
    it(`sends again at once on a new connection when the receiver drops (${drop}) a reused one before answering`, async () => {
      // The receiver drops its idle connection just as the next request arrives on it: the race of
      // a keep-alive timeout shorter than the sender's, announced by no `Keep-Alive` header.
      const { receiver, lookups, send } = await setUp((connection, request) =>
        connection === 1 && request === 2 ? drop : 'ok',
      )
      expect(await send('msg_1')).toMatchObject({ statusCode: 200, error: null })
      const second = await send('msg_2')
      expect(second).toMatchObject({ statusCode: 200, error: null })
      // At once, not after a retry delay.
      expect(second.durationMs).toBeLessThan(2000)
      expect(receiver.answered).toEqual(['msg_1', 'msg_2'])
      expect(receiver.connections).toBe(2)
      // The new connection was looked up (and so checked) like any other.
      expect(lookups).toEqual(['receiver.example', 'receiver.example'])
      // Later attempts go on as before.
      expect(await send('msg_3')).toMatchObject({ statusCode: 200, error: null })
      expect(receiver.answered).toEqual(['msg_1', 'msg_2', 'msg_3'])
    })
  }

  it('fails an attempt whose new connection is reset, sending it only once', async () => {
    const { receiver, send } = await setUp(() => 'reset')
    const outcome = await send('msg_1')
    expect(outcome.statusCode).toBeNull()
    expect(outcome.error).toMatch(/ECONNRESET|socket hang up/)
    expect(receiver.connections).toBe(1)
  })

  it('sends again only once: a reset of the new connection too fails the attempt', async () => {
    // The kept-alive connection is dropped at the next request, and so is every new one.
    const { receiver, send } = await setUp((connection, request) =>
      connection === 1 && request === 1 ? 'ok' : 'reset',
    )
    await send('msg_1')
    const outcome = await send('msg_2')
    expect(outcome.statusCode).toBeNull()
    expect(outcome.error).toMatch(/ECONNRESET|socket hang up/)
    expect(receiver.answered).toEqual(['msg_1'])
    expect(receiver.connections).toBe(2)
  })

  it('does not send again once any byte of the answer has come', async () => {
    const { receiver, send } = await setUp((connection, request) =>
      connection === 1 && request === 2 ? 'partial' : 'ok',
    )
    await send('msg_1')
    const outcome = await send('msg_2')
    expect(outcome.statusCode).toBeNull()
    expect(outcome.error).not.toBeNull()
    expect(receiver.answered).toEqual(['msg_1'])
    expect(receiver.connections).toBe(1)
  })

  it('ends the attempt by the timeout, the new connection included', async () => {
    const { receiver, send } = await setUp(
      (connection, request) =>
        connection === 1 && request === 2 ? 'close' : connection === 1 ? 'ok' : 'hang',
      400,
    )
    await send('msg_1')
    const outcome = await send('msg_2')
    expect(outcome).toMatchObject({ statusCode: null, error: 'timed out after 400 ms' })
    expect(outcome.durationMs).toBeLessThan(1500)
    expect(receiver.connections).toBe(2)
  })
})

describe('webhook sender against a receiver whose answer never ends', () => {
  it('records the status once 64 KiB of the body have come, without waiting for the rest or the timeout', async () => {
    let sent = 0
    const server = createServer((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/plain' })
      // An endless body, as a misbehaving proxy's error page streamed forever; it stops when the
      // sender goes, or after 20 s.
      const chunk = Buffer.alloc(16 * 1024, 'x')
      const until = Date.now() + 20_000
      const more = () => {
        while (!response.destroyed && Date.now() < until) {
          sent += chunk.length
          if (!response.write(chunk)) return void response.once('drain', more)
        }
        response.end()
      }
      more()
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const sender = new WebhookSender({ timeoutMs: 10_000, allowPrivateUrls: true })
    try {
      const { port } = server.address() as AddressInfo
      const outcome = await sender.send(`http://127.0.0.1:${port}/hook`, { 'webhook-id': 'msg_1' }, '{}')
      expect(outcome).toMatchObject({ statusCode: 503, error: null })
      expect(outcome.durationMs).toBeLessThan(5000)
      expect(sent).toBeGreaterThan(64 * 1024)
    } finally {
      sender.close()
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('webhook sender keeping the start of an answer', () => {
  /** Answers with `status` and the body written in these parts, each flushed on its own. */
  async function answering(status: number, parts: Buffer[]) {
    const server = createServer((_request, response) => {
      response.writeHead(status, { 'content-type': 'text/plain' })
      const next = () => {
        const part = parts.shift()
        if (part === undefined) return void response.end()
        response.write(part, () => setImmediate(next))
      }
      next()
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const sender = new WebhookSender({ timeoutMs: 5000, allowPrivateUrls: true })
    try {
      const { port } = server.address() as AddressInfo
      return await sender.send(`http://127.0.0.1:${port}/hook`, { 'webhook-id': 'msg_1' }, '{}')
    } finally {
      sender.close()
      server.closeAllConnections()
      server.close()
    }
  }

  it('keeps the first KiB across the parts it came in, and says that more came', async () => {
    const parts = ['a', 'b', 'c'].map((fill) => Buffer.alloc(600, fill))
    const outcome = await answering(422, [...parts])
    expect(outcome).toMatchObject({ statusCode: 422, error: null, bodyTruncated: true })
    expect(outcome.body).toEqual(Buffer.concat(parts).subarray(0, ANSWER_BODY_KEPT_BYTES))
  })

  it('keeps an answer of exactly a KiB whole, and an empty one as empty', async () => {
    const whole = Buffer.alloc(ANSWER_BODY_KEPT_BYTES, 'z')
    expect(await answering(200, [whole])).toMatchObject({ body: whole, bodyTruncated: false })
    expect(await answering(204, [])).toMatchObject({ body: Buffer.alloc(0), bodyTruncated: false })
  })
})
