import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { SCOPES } from '../../src/tokens/scopes.js'
import { errorOf, listenLocally, makeApp, type TestApp } from '../helpers/app.js'
import {
  afterContinue,
  continued,
  openSocket,
  parseResponses,
  rawExchange,
  readUntilClose,
} from '../helpers/raw-http.js'
import { sqliteKind } from '../helpers/stores.js'

// The answers the server gives a request before its operation runs are listed under every operation
// they can reach: these tests get each one through every operation, over a real socket, and the
// contract check confirms it is listed there.

const WEBHOOK_ID = 'wh_AAAAAAAAAAAAAAAAAAAAAA'
const DELIVERY_ID = 'dlv_000000000000000000000000'

/** A request line for each documented operation, and whether the operation takes a body. */
const OPERATIONS: Record<string, { method: string; url: string; body?: true }> = {
  health: { method: 'GET', url: '/healthz' },
  ready: { method: 'GET', url: '/readyz' },
  createPlant: { method: 'POST', url: '/plants', body: true },
  listPlants: { method: 'GET', url: '/plants' },
  getPlant: { method: 'GET', url: '/plants/1' },
  replacePlant: { method: 'PUT', url: '/plants/1', body: true },
  updatePlant: { method: 'PATCH', url: '/plants/1', body: true },
  deletePlant: { method: 'DELETE', url: '/plants/1' },
  getPlantHistory: { method: 'GET', url: '/plants/1/history' },
  listChanges: { method: 'GET', url: '/events' },
  createPlants: { method: 'POST', url: '/plants/batch', body: true },
  deletePlants: { method: 'POST', url: '/plants/batch-delete', body: true },
  metrics: { method: 'GET', url: '/metrics' },
  createWebhook: { method: 'POST', url: '/webhooks', body: true },
  listWebhooks: { method: 'GET', url: '/webhooks' },
  getWebhook: { method: 'GET', url: `/webhooks/${WEBHOOK_ID}` },
  updateWebhook: { method: 'PATCH', url: `/webhooks/${WEBHOOK_ID}`, body: true },
  deleteWebhook: { method: 'DELETE', url: `/webhooks/${WEBHOOK_ID}` },
  rotateWebhookSecret: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/rotate-secret` },
  testWebhook: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/test` },
  listWebhookDeliveries: { method: 'GET', url: `/webhooks/${WEBHOOK_ID}/deliveries` },
  retryWebhookDelivery: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/deliveries/${DELIVERY_ID}/retry` },
  replayWebhook: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/replay`, body: true },
  listWebhookDeliveryAttempts: {
    method: 'GET',
    url: `/webhooks/${WEBHOOK_ID}/deliveries/${DELIVERY_ID}/attempts`,
  },
  recoverWebhook: { method: 'POST', url: `/webhooks/${WEBHOOK_ID}/recover`, body: true },
  createToken: { method: 'POST', url: '/tokens', body: true },
  listTokens: { method: 'GET', url: '/tokens' },
  getToken: { method: 'GET', url: '/tokens/ffffffffffffffff' },
  revokeToken: { method: 'DELETE', url: '/tokens/ffffffffffffffff' },
  rollToken: { method: 'POST', url: '/tokens/ffffffffffffffff/roll', body: true },
  // A cursor it refuses: a stream that opened would never close the exchange.
  streamChanges: { method: 'GET', url: '/events/stream?after=x' },
  createStreamTicket: { method: 'POST', url: '/events/tickets' },
  getCaller: { method: 'GET', url: '/me' },
}
const IDS = Object.keys(OPERATIONS)
const op = (id: string) => OPERATIONS[id] as (typeof OPERATIONS)[string]

async function listening(t: TestApp): Promise<number> {
  return await listenLocally(t.app)
}

describe('answers given before the operation runs', () => {
  let t: TestApp
  let port: number
  let auth: string
  beforeAll(async () => {
    // Node checks the request timeout once a second; a short one keeps the stalled bodies brief.
    t = await makeApp(sqliteKind, { timeouts: { requestTimeoutMs: 300, headersTimeoutMs: 300 } })
    port = await listening(t)
    auth = `Authorization: Bearer ${await t.token([...SCOPES])}\r\n`
  })
  afterAll(() => t.close())

  it('has a request line for every documented operation', () => {
    const { paths } = t.app.swagger() as unknown as {
      paths: Record<string, Record<string, { operationId: string }>>
    }
    const documented = Object.values(paths).flatMap((item) => Object.values(item).map((o) => o.operationId))
    expect(documented.sort()).toEqual([...IDS].sort())
  })

  /** Sends `head` (and `rest`) for the operation and returns its one answer, checked against the document. */
  async function answer(id: string, head: string, rest = '') {
    const { method, url } = op(id)
    const { received, closed } = await rawExchange(port, [`${method} ${url} HTTP/1.1\r\n${head}\r\n${rest}`])
    expect(closed).toBe(true)
    const responses = parseResponses(received)
    expect(responses).toHaveLength(1)
    const response = responses[0] as (typeof responses)[number]
    t.checkAnswer(method, url, response)
    return response
  }

  it.each(IDS)('%s answers 400 to a transfer coding it does not apply', async (id) => {
    const response = await answer(id, `Host: x\r\n${auth}Transfer-Encoding: gzip, chunked\r\n`, '0\r\n\r\n')
    expect([response.status, errorOf(response).error]).toEqual([400, errors.BAD_REQUEST.code])
  })

  it.each(IDS)('%s answers 417 to an expectation other than 100-continue', async (id) => {
    const response = await answer(id, `Host: x\r\n${auth}Expect: 200-ok\r\n`)
    expect([response.status, errorOf(response).error]).toEqual([417, errors.EXPECTATION_FAILED.code])
  })

  it.each(IDS.filter((id) => op(id).body))('%s answers 408 to a body that stops arriving', async (id) => {
    const head = `Host: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 40\r\n`
    const response = await answer(id, head, '{"id": 1,')
    expect([response.status, errorOf(response).error]).toEqual([408, errors.REQUEST_TIMEOUT.code])
  })
})

describe('every operation while the process shuts down', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await makeApp(sqliteKind)
  })
  afterAll(() => t.close())

  it('answers 503 with Retry-After to a request that arrives on a connection still open', async () => {
    const port = await listening(t)
    const auth = `Authorization: Bearer ${await t.token()}\r\n`
    // Each connection holds a create in flight (its body not yet sent) through the start of the close.
    const held = await Promise.all(
      IDS.map(async (id, i) => {
        const body = JSON.stringify({ id: 9000 + i, name: 'held' })
        const socket = await openSocket(port)
        const answers = readUntilClose(socket, 10_000)
        const started = continued(socket)
        socket.write(
          `POST /plants HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
        )
        await started
        return { id, body, socket, answers }
      }),
    )
    const closed = t.app.close()
    await vi.waitFor(
      async () => {
        const refused = await openSocket(port).then(
          (probe) => probe.destroy(),
          () => 'refused',
        )
        expect(refused).toBe('refused')
      },
      { timeout: 10_000, interval: 20 },
    )
    for (const { id, body, socket } of held) {
      const { method, url } = op(id)
      socket.write(`${body}${method} ${url} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)
    }
    for (const { id, answers } of held) {
      const responses = parseResponses(afterContinue(await answers))
      expect([id, responses.map((r) => r.status)]).toEqual([id, [200, 503]])
      const refused = responses[1] as (typeof responses)[number]
      t.checkAnswer(op(id).method, op(id).url, refused)
      expect(errorOf(refused).error).toBe(errors.UNAVAILABLE.code)
      expect(refused.headers['retry-after']).toBe('1')
    }
    await closed
  })
})
