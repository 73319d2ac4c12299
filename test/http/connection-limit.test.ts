import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { listenLocally, makeApp, type TestApp } from '../helpers/app.js'
import { openSocket, readUntilClose } from '../helpers/raw-http.js'
import { sqliteKind } from '../helpers/stores.js'

const REQUEST = 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'

describe('closing connections past --max-connections (the app’s own limit, in a worker as in one process)', () => {
  const apps: TestApp[] = []
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close()
  })

  it('closes a connection past the limit at once, and takes one again when an open one has closed', async () => {
    const testApp = await makeApp(sqliteKind, { maxConnections: 2 })
    apps.push(testApp)
    // The server's side of each connection closes a moment after the client's: a new connection
    // counts on the one before it only once the server has seen it close.
    const closedOnServer: Promise<unknown>[] = []
    testApp.app.server.on('connection', (socket) => closedOnServer.push(once(socket, 'close')))
    const port = await listenLocally(testApp.app)

    const held = [await openSocket(port), await openSocket(port)]
    const past = await openSocket(port)
    past.write(REQUEST)
    // Closed without an answer, before the request could be read.
    expect(await readUntilClose(past)).toBe('')

    // Each connection counted is answered; once one has closed, a new one is taken in its place.
    const first = held[0]
    first?.write(REQUEST)
    expect(await readUntilClose(first as NonNullable<typeof first>)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    await closedOnServer[0]
    const next = await openSocket(port)
    next.write(REQUEST)
    expect(await readUntilClose(next)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    held[1]?.destroy()
  })

  it('takes every connection when no limit is set', async () => {
    const testApp = await makeApp(sqliteKind)
    apps.push(testApp)
    const port = await listenLocally(testApp.app)
    const held = await Promise.all(Array.from({ length: 5 }, () => openSocket(port)))
    const last = await openSocket(port)
    last.write(REQUEST)
    expect(await readUntilClose(last)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    for (const socket of held) socket.destroy()
  })
})
