import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenLocally, makeApp, type TestApp } from '../helpers/app.js'
import { rawRequest } from '../helpers/raw-http.js'
import { storeKinds } from '../helpers/stores.js'

// The same refusals the built server's tests check over sockets (hostile-sockets), made here on an
// app in this process, where coverage sees them.
const kind = storeKinds[0] as (typeof storeKinds)[0]

describe('answers given before routing, in process', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    t = await makeApp(kind)
    port = await listenLocally(t.app)
  })
  afterAll(() => t.close())

  it.each([
    [
      'a Host with userinfo',
      'GET /healthz HTTP/1.1\r\nHost: u@x\r\n\r\n',
      'The Host header must be a host name or address, with an optional port.',
    ],
    [
      'HTTP/2.0 as text',
      'GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n',
      'Only HTTP/1.1 and HTTP/1.0 are served.',
    ],
    // Node refuses a version past 1.1 itself; the response is the parser's, in the Error shape.
    [
      'HTTP/1.2, which Node refuses itself',
      'GET /healthz HTTP/1.2\r\nHost: x\r\n\r\n',
      'The request is malformed.',
    ],
    ['a version followed by junk', 'GET /healthz HTTP/1.1 x\r\nHost: x\r\n\r\n', 'The request is malformed.'],
  ])('refuses %s with 400 and closes', async (_what, bytes, message) => {
    const answer = await rawRequest(port, bytes, 2000)
    expect(answer.startsWith('HTTP/1.1 400 ')).toBe(true)
    expect(answer).toMatch(/\r\nconnection: close\r\n/i)
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: 40000, message })
  })

  it('answers a create sent with Connection: close as made, whatever bytes follow it', async () => {
    const token = await t.token()
    const body = '{"id": 4401, "name": "a"}'
    const answer = await rawRequest(
      port,
      `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}trailing bytes`,
      2000,
    )
    expect(answer.match(/^HTTP\/1\.1 \d+/gm)).toEqual(['HTTP/1.1 200'])
    expect(await t.store.plants.get(4401n)).toEqual({ id: 4401n, name: 'a' })
  })
})
