import { readFileSync } from 'node:fs'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { clientSchemaSource, publishedDocument } from '../../scripts/generate-client.js'
import {
  createClient,
  type ListQuery,
  type PlantStoreClient,
  PlantStoreError,
} from '../../src/client/index.js'
import { INT64_FIELDS, parseExactJson } from '../../src/client/json.js'
import { errors } from '../../src/errors.js'
import { makeApp, type TestApp } from '../helpers/app.js'
import { ROOT } from '../helpers/process.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'

/** Each of the client's methods, called with placeholder arguments and the signal given, if any. */
function everyMethod(
  client: PlantStoreClient,
  { withAllPlants = false } = {},
): Array<(signal?: AbortSignal) => Promise<unknown>> {
  const options = (signal?: AbortSignal) => (signal ? { signal } : {})
  return [
    (signal) => client.createPlant({ id: 1n, name: 'a' }, options(signal)),
    (signal) => client.listPlants({}, options(signal)),
    ...(withAllPlants
      ? [
          (signal?: AbortSignal) => client.allPlants({}, options(signal)).next(),
          (signal?: AbortSignal) => client.changes({ follow: false, ...options(signal) }).next(),
        ]
      : []),
    (signal) => client.getPlant(1n, options(signal)),
    (signal) => client.history(1n, options(signal)),
    (signal) => client.changePage(options(signal)),
    (signal) => client.replacePlant(1n, { name: 'a' }, options(signal)),
    (signal) => client.updatePlant(1n, { name: 'a' }, options(signal)),
    (signal) => client.deletePlant(1n, options(signal)),
    (signal) => client.createPlants([{ id: 1n, name: 'a' }], options(signal)),
    (signal) => client.deletePlants([1n], options(signal)),
  ]
}

/** A client whose every request gets a fresh `answer()`, and the count of requests it made. */
function clientAnswering(answer: () => Response, retries: number) {
  const made = { calls: 0 }
  const client = createClient({
    baseUrl: 'http://127.0.0.1:1',
    token: 't',
    retries,
    fetch: async () => {
      made.calls++
      return answer()
    },
  })
  return { client, made }
}

describe.each(storeKinds)('the typed client against $name', (kind) => {
  let t: TestApp
  let client: PlantStoreClient
  let baseUrl: string
  const sent: Request[] = []
  beforeAll(async () => {
    t = await makeApp(kind)
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const token = await t.token()
    client = createClient({
      baseUrl,
      token,
      fetch: async (request) => {
        sent.push(request.clone())
        return t.checkedFetch(request)
      },
    })
  })
  afterAll(() => t.close())

  it('sends and reads back 9223372036854775807 exactly, as a bigint', async () => {
    const created = await client.createPlant({ id: 9223372036854775807n, name: 'Largest', tag: 'edge' })
    expect(created.plant).toEqual({ id: 9223372036854775807n, name: 'Largest', tag: 'edge' })
    const read = await client.getPlant(9223372036854775807n)
    expect(read.plant.id).toBe(9223372036854775807n)
    expect(read.etag).toBe(created.etag)
    await client.createPlant({ id: -9223372036854775808n, name: 'Smallest' })
    expect((await client.getPlant(-9223372036854775808n)).plant.id).toBe(-9223372036854775808n)
  })

  it('finds plants with every parameter, counts them and follows the cursor through every page', async () => {
    const names = ['Boston Fern', 'fernleaf', 'Maidenhair FERN', 'Ölbaum', 'aloe']
    for (const [i, name] of names.entries()) {
      await client.createPlant({
        id: 9223372036854775000n + BigInt(i),
        name,
        tag: i % 2 === 0 ? 'find-a' : 'find-b',
      })
    }
    sent.length = 0
    const query: ListQuery = { q: 'FERN', tag: ['find-a', 'find-b'], sort: '-name', count: true, limit: 1 }
    const first = await client.listPlants(query)
    expect(first.plants).toEqual([{ id: 9223372036854775001n, name: 'fernleaf', tag: 'find-b' }])
    expect(first.total).toBe(3)
    expect(typeof first.next).toBe('string')
    const url = new URL(sent[0]?.url as string)
    expect(url.searchParams.getAll('tag')).toEqual(['find-a', 'find-b'])
    expect([url.searchParams.get('q'), url.searchParams.get('sort'), url.searchParams.get('count')]).toEqual([
      'FERN',
      '-name',
      'true',
    ])
    const found: bigint[] = []
    for await (const plant of client.allPlants(query)) found.push(plant.id)
    expect(found).toEqual([9223372036854775001n, 9223372036854775002n, 9223372036854775000n])
    expect((await client.listPlants({ tag: ['find-a'], sort: 'id' })).total).toBeUndefined()
    const mixed = await client
      .listPlants({ ...query, cursor: first.next as string, sort: 'name' })
      .catch((e: unknown) => e)
    expect(mixed).toMatchObject({ name: 'PlantStoreError', status: 400, code: errors.QUERY_INVALID.code })
  })

  it('sends an Idempotency-Key with every create, so a retry replays instead of failing', async () => {
    sent.length = 0
    await client.createPlant({ id: 1n, name: 'a' })
    const key = sent[0]?.headers.get('idempotency-key')
    expect(key).toMatch(/^[0-9a-f-]{36}$/)
    const again = await client.createPlant({ id: 1n, name: 'a' }, { idempotencyKey: key as string })
    expect(again.plant).toEqual({ id: 1n, name: 'a' })
    const other = await client.createPlant({ id: 1n, name: 'a' }).catch((error: unknown) => error)
    expect(other).toBeInstanceOf(PlantStoreError)
    expect(other).toMatchObject({ status: 409, code: errors.PLANT_EXISTS.code })
  })

  it('retries a create that failed in transit with the same key, creating once', async () => {
    let calls = 0
    const flaky = createClient({
      baseUrl,
      token: await t.token(),
      fetch: async (request) => {
        calls++
        const response = await t.checkedFetch(request)
        // The first answer is lost after the plant was committed.
        if (calls === 1) throw new TypeError('fetch failed')
        return response
      },
    })
    const created = await flaky.createPlant({ id: 2n, name: 'b' })
    expect(created.plant).toEqual({ id: 2n, name: 'b' })
    expect(calls).toBe(2)
  })

  it('creates and deletes many at once, ids exact as bigints both ways', async () => {
    const big = 9007199254740993n
    const plants = [
      { id: big, name: 'past 2^53', tag: 'batch' },
      { id: big + 2n, name: 'next' },
    ]
    sent.length = 0
    expect(await client.createPlants(plants)).toEqual(plants)
    expect(sent[0]?.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/)
    const taken = await client.createPlants([{ id: big, name: 'again' }]).catch((e: unknown) => e)
    expect(taken).toMatchObject({ status: 409, code: errors.PLANT_EXISTS.code })
    const missing = await client.deletePlants([big, big + 1n]).catch((e: unknown) => e)
    expect(missing).toMatchObject({ status: 404, code: errors.PLANT_NOT_FOUND.code })
    expect(await client.deletePlants([big + 2n, big + 1n, big], { allowMissing: true })).toEqual([
      big + 2n,
      big,
    ])
  })

  it('creates a full batch of the largest plants over real HTTP, past the service-wide body limit', async () => {
    const plants = Array.from({ length: 1000 }, (_, i) => ({
      id: -9223372036854770000n + BigInt(i),
      name: '\u{1F33F}'.repeat(200),
      tag: '\u{1FAB4}'.repeat(100),
    }))
    expect(await client.createPlants(plants)).toEqual(plants)
    const ids = plants.map((plant) => plant.id)
    expect(await client.deletePlants(ids)).toEqual(ids)
  })

  it('lists page by page and changes plants with If-Match', async () => {
    for (let i = 10n; i < 15n; i++) await client.createPlant({ id: i, name: `p${i}`, tag: 'paged' })
    const first = await client.listPlants({ tag: ['paged'], limit: 2 })
    expect(first.plants.map((p) => p.id)).toEqual([10n, 11n])
    const second = await client.listPlants({ tag: ['paged'], limit: 2, cursor: first.next as string })
    expect(second.plants.map((p) => p.id)).toEqual([12n, 13n])
    const all: bigint[] = []
    for await (const plant of client.allPlants({ tag: ['paged'], limit: 2 })) all.push(plant.id)
    expect(all).toEqual([10n, 11n, 12n, 13n, 14n])

    const { etag } = await client.getPlant(10n)
    const replaced = await client.replacePlant(10n, { name: 'renamed' }, { ifMatch: etag })
    expect(replaced.plant).toEqual({ id: 10n, name: 'renamed' })
    const stale = await client.updatePlant(10n, { tag: 'x' }, { ifMatch: etag }).catch((e: unknown) => e)
    expect(stale).toMatchObject({ status: 412, code: errors.PRECONDITION_FAILED.code })
    const patched = await client.updatePlant(10n, { tag: 'x' }, { ifMatch: replaced.etag })
    expect(patched.plant).toEqual({ id: 10n, name: 'renamed', tag: 'x' })
    await client.deletePlant(10n)
    await expect(client.getPlant(10n)).rejects.toMatchObject({
      status: 404,
      code: errors.PLANT_NOT_FOUND.code,
    })
  })

  it('sends the id a replacement or a patch may repeat, exactly, and the service holds it to the path', async () => {
    const id = 9223372036854775806n
    await client.createPlant({ id, name: 'repeated' })
    expect((await client.replacePlant(id, { id, name: 'again' })).plant).toEqual({ id, name: 'again' })
    expect((await client.updatePlant(id, { id, tag: 'x' })).plant).toEqual({ id, name: 'again', tag: 'x' })
    for (const change of [
      () => client.replacePlant(id, { id: id - 1n, name: 'other' }),
      () => client.updatePlant(id, { id: id - 1n }),
    ]) {
      await expect(change()).rejects.toMatchObject({ status: 400, code: errors.ID_MISMATCH.code })
    }
  })

  it('still sends an If-Match whose ETag the answer lacked, so the change is refused, not made unconditionally', async () => {
    // Something between client and service (an old proxy) strips the ETag from every answer.
    const stripped = createClient({
      baseUrl,
      token: await t.token(),
      fetch: async (request) => {
        const response = await t.checkedFetch(request)
        const headers = new Headers(response.headers)
        headers.delete('etag')
        return new Response(response.body, { status: response.status, headers })
      },
    })
    await client.createPlant({ id: 30n, name: 'read' })
    const { etag } = await stripped.getPlant(30n)
    expect(etag).toBe('')
    await client.updatePlant(30n, { name: 'changed meanwhile' })
    for (const change of [
      () => stripped.replacePlant(30n, { name: 'lost update' }, { ifMatch: etag }),
      () => stripped.updatePlant(30n, { name: 'lost update' }, { ifMatch: etag }),
      () => stripped.deletePlant(30n, { ifMatch: etag }),
    ]) {
      await expect(change()).rejects.toMatchObject({ status: 412, code: errors.PRECONDITION_FAILED.code })
    }
    expect((await client.getPlant(30n)).plant).toEqual({ id: 30n, name: 'changed meanwhile' })
  })

  it('reads with ifNoneMatch: notModified and the ETag while the plant has it, the plant once it changed', async () => {
    const created = await client.createPlant({ id: 40n, name: 'cached' })
    sent.length = 0
    expect(await client.getPlant(40n, { ifNoneMatch: created.etag })).toEqual({
      notModified: true,
      etag: created.etag,
    })
    expect(sent[0]?.headers.get('if-none-match')).toBe(created.etag)
    const changed = await client.updatePlant(40n, { tag: 'x' })
    const read = await client.getPlant(40n, { ifNoneMatch: created.etag })
    expect(read).toEqual({ plant: { id: 40n, name: 'cached', tag: 'x' }, etag: changed.etag })
    // The type narrows on notModified: only the plant read has one.
    expect(read.notModified ? undefined : read.plant.tag).toBe('x')
    expect(await client.getPlant(40n, { ifNoneMatch: `"0-none", ${changed.etag}` })).toEqual({
      notModified: true,
      etag: changed.etag,
    })
  })

  it('reads with ifMatch: the plant while it has that ETag, a 412 once it changed', async () => {
    const created = await client.createPlant({ id: 47n, name: 'guarded' })
    sent.length = 0
    expect(await client.getPlant(47n, { ifMatch: created.etag })).toEqual(created)
    expect(sent[0]?.headers.get('if-match')).toBe(created.etag)
    await client.updatePlant(47n, { name: 'moved on' })
    await expect(client.getPlant(47n, { ifMatch: created.etag })).rejects.toMatchObject({
      status: 412,
      code: errors.PRECONDITION_FAILED.code,
    })
  })

  it('makes version 4 UUID keys from getRandomValues where randomUUID is missing, as on a page served over http', async () => {
    const real = globalThis.crypto
    vi.stubGlobal('crypto', { getRandomValues: real.getRandomValues.bind(real), subtle: real.subtle })
    sent.length = 0
    try {
      await client.createPlant({ id: 41n, name: 'a' })
      await client.createPlant({ id: 42n, name: 'b' })
    } finally {
      vi.unstubAllGlobals()
    }
    const keys = sent.map((request) => request.headers.get('idempotency-key'))
    expect(keys).toEqual([
      expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
    ])
    expect(keys[0]).not.toBe(keys[1])
  })

  it('parses compressed pages exactly', async () => {
    for (let i = 0n; i < 40n; i++) {
      await client.createPlant({ id: 9007199254740993n + i, name: `big number ${i}`, tag: 'big' })
    }
    const page = await client.listPlants({ tag: ['big'] })
    expect(page.plants[0]?.id).toBe(9007199254740993n)
    expect(page.plants[39]?.id).toBe(9007199254741032n)
  })

  it('issues, rolls and revokes a token through its api, typed by the document', async () => {
    const admin = createClient({
      baseUrl,
      token: await t.token(['tokens:manage', 'plants:read']),
      fetch: (request) => t.checkedFetch(request),
    })
    const created = await admin.api.POST('/tokens', { body: { name: 'typed', scopes: ['plants:read'] } })
    expect(created.response.status).toBe(201)
    const id = created.data?.id as string
    const rolled = await admin.api.POST('/tokens/{id}/roll', {
      params: { path: { id } },
      body: { overlap: '0s' },
    })
    expect(rolled.data?.previousSecretExpiresAt).toBeNull()
    expect(rolled.data?.secret).not.toBe(created.data?.secret)
    const reader = createClient({ baseUrl, token: rolled.data?.secret as string })
    expect((await reader.listPlants()).plants).toBeInstanceOf(Array)
    const revoked = await admin.api.DELETE('/tokens/{id}', { params: { path: { id } } })
    expect(revoked.response.status).toBe(204)
    const read = await admin.api.GET('/tokens/{id}', { params: { path: { id } } })
    expect(read.data?.status).toBe('revoked')
  })
})

describe('the typed client when no answer comes', () => {
  /** A port nothing listens on: one the system just handed out and took back. */
  async function closedPort(): Promise<number> {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise((resolve) => server.close(resolve))
    return port
  }

  it('throws PlantStoreError with status 0 and the refusal as its cause', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`
    const failure = await createClient({ baseUrl, token: 't' })
      .getPlant(1n)
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(PlantStoreError)
    expect(failure).toMatchObject({ status: 0, code: undefined })
    expect((failure as Error).message).toBe(
      `no answer from ${baseUrl}: connect ECONNREFUSED 127.0.0.1:${baseUrl.split(':')[2]}`,
    )
    expect((failure as Error).cause).toBeInstanceOf(TypeError)
  })

  it('retries a create that got no answer, then throws the same error', async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}`
    let calls = 0
    const client = createClient({
      baseUrl,
      token: 't',
      retries: 2,
      fetch: (request) => {
        calls++
        return fetch(request)
      },
    })
    await expect(client.createPlant({ id: 1n, name: 'a' })).rejects.toMatchObject({ status: 0 })
    expect(calls).toBe(3)
  })

  it('leaves an abort the caller asked for as it is, and does not retry it', async () => {
    let calls = 0
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: () => {
        calls++
        return Promise.reject(new DOMException('stopped', 'AbortError'))
      },
    })
    const failure = await client.createPlant({ id: 1n, name: 'a' }).catch((error: unknown) => error)
    expect(failure).not.toBeInstanceOf(PlantStoreError)
    expect((failure as Error).name).toBe('AbortError')
    expect(calls).toBe(1)
  })
})

describe('the typed client when something else answers, such as a proxy', () => {
  const answers: Array<[string, () => Response]> = [
    ['an empty 502', () => new Response('', { status: 502 })],
    [
      'a 503 with Content-Length: 0',
      () => new Response(null, { status: 503, headers: { 'content-length': '0' } }),
    ],
    [
      'an HTML 502',
      () => new Response('<h1>Bad Gateway</h1>', { status: 502, headers: { 'content-type': 'text/html' } }),
    ],
  ]

  it.each(answers)(
    'throws PlantStoreError with the status for %s, from every method',
    async (_what, answer) => {
      const { client, made } = clientAnswering(answer, 1)
      const status = answer().status
      const calling = everyMethod(client)
      for (const call of calling) {
        const failure = await call().catch((error: unknown) => error)
        expect(failure).toBeInstanceOf(PlantStoreError)
        expect(failure).toMatchObject({ status, code: undefined, message: `HTTP ${status}` })
      }
      // The creates and the four reads were retried once as a 5xx; the four other changes are sent once.
      expect(made.calls).toBe(2 * 6 + 4)
    },
  )
})

describe("the typed client when a success is not the service's", () => {
  const json = { 'content-type': 'application/json' }
  const answers: Array<[string, () => Response]> = [
    [
      "a captive proxy's 200 text/html",
      () => new Response('<h1>Sign in</h1>', { status: 200, headers: { 'content-type': 'text/html' } }),
    ],
    ['a 200 with broken JSON', () => new Response('[{"id": 1, "na', { status: 200, headers: json })],
    [
      'a 200 with an id past int64',
      () => new Response('{"id": 9223372036854775808, "name": "a"}', { status: 200, headers: json }),
    ],
    [
      'a 200 with JSON of another shape',
      () => new Response('{"status": "ok"}', { status: 200, headers: json }),
    ],
    [
      'a 200 whose type only starts like JSON (application/jsonp)',
      () =>
        new Response('{"id": 1, "name": "a"}', {
          status: 200,
          headers: { 'content-type': 'application/jsonp' },
        }),
    ],
    [
      "another service's 200 with an id but no name",
      () => new Response('{"id": 1, "title": "a"}', { status: 200, headers: json }),
    ],
    [
      "another service's 200 with a list of ids without names",
      () => new Response('[{"id": 1, "title": "a"}]', { status: 200, headers: json }),
    ],
    [
      'a 200 whose tag is not a string',
      () => new Response('{"id": 1, "name": "a", "tag": 7}', { status: 200, headers: json }),
    ],
    ['an empty 200', () => new Response('', { status: 200 })],
    [
      'a 200 with Content-Length: 0',
      () => new Response(null, { status: 200, headers: { 'content-length': '0' } }),
    ],
  ]

  it.each(answers)(
    'throws PlantStoreError with the status for %s, from every method',
    async (_what, answer) => {
      const { client, made } = clientAnswering(answer, 2)
      const calling = everyMethod(client)
      for (const call of calling) {
        const failure = await call().catch((error: unknown) => error)
        expect(failure).toBeInstanceOf(PlantStoreError)
        expect(failure).toMatchObject({ status: 200, code: undefined })
      }
      // An answer that came is not retried: reading it again would go no better.
      expect(made.calls).toBe(calling.length)
    },
  )

  it.each([
    '</plants?after=5>; rel="next"',
    '</plants?cursor=>; rel="next"',
    '</plants?cursor=a%2Bb>; rel="next"',
  ])('throws PlantStoreError for a next link without a cursor it can send: %s', async (link) => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () => new Response('[]', { status: 200, headers: { ...json, link } }),
    })
    await expect(client.listPlants()).rejects.toMatchObject({ name: 'PlantStoreError', status: 200 })
  })

  it.each(['-1', '1.5', 'many', ''])('throws PlantStoreError for an X-Total-Count of %j', async (count) => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () => new Response('[]', { status: 200, headers: { ...json, 'x-total-count': count } }),
    })
    await expect(client.listPlants({ count: true })).rejects.toMatchObject({
      name: 'PlantStoreError',
      status: 200,
    })
  })

  it('stops a walk whose next link does not move past the page it follows, as a cache that ignores the query would', async () => {
    let calls = 0
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () => {
        calls++
        // Bounds the walk this test makes without the check: every page the same, then an end.
        if (calls > 5) return new Response('[]', { status: 200, headers: json })
        return new Response('[{"id": 1, "name": "a"}]', {
          status: 200,
          headers: { ...json, link: '</plants?limit=1&cursor=abc>; rel="next"' },
        })
      },
    })
    const seen: bigint[] = []
    const walk = (async () => {
      for await (const plant of client.allPlants({ limit: 1 })) seen.push(plant.id)
    })()
    await expect(walk).rejects.toMatchObject({ name: 'PlantStoreError', status: 200 })
    expect(seen).toEqual([1n])
    expect(calls).toBe(2)
  })

  it('takes a 304 for notModified only when it sent ifNoneMatch, with an ETag or without one', async () => {
    const { client } = clientAnswering(
      () => new Response(null, { status: 304, headers: { etag: '"1-a"' } }),
      2,
    )
    expect(await client.getPlant(1n, { ifNoneMatch: '"1-a"' })).toEqual({ notModified: true, etag: '"1-a"' })
    await expect(client.getPlant(1n)).rejects.toMatchObject({ name: 'PlantStoreError', status: 304 })
    const stripped = clientAnswering(() => new Response(null, { status: 304 }), 2).client
    expect(await stripped.getPlant(1n, { ifNoneMatch: '"1-a"' })).toEqual({ notModified: true, etag: '' })
  })

  it('throws PlantStoreError with status 0 when a custom fetch rejects with undefined', async () => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: () => Promise.reject(undefined),
    })
    await expect(client.getPlant(1n)).rejects.toMatchObject({ name: 'PlantStoreError', status: 0 })
  })
})

describe('the typed client when the caller gives up', () => {
  /** A server that takes connections and never answers them. */
  async function silentServer(): Promise<{ baseUrl: string; close: () => Promise<void> }> {
    const sockets = new Set<Socket>()
    const server = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      close: async () => {
        for (const socket of sockets) socket.destroy()
        await new Promise((resolve) => server.close(resolve))
      },
    }
  }

  it('ends every method at once on its own signal, throwing the abort as it is', async () => {
    const silent = await silentServer()
    try {
      const client = createClient({ baseUrl: silent.baseUrl, token: 't' })
      const calling = everyMethod(client, { withAllPlants: true })
      for (const call of calling) {
        const failure = await call(AbortSignal.timeout(50)).catch((error: unknown) => error)
        expect((failure as Error).name).toBe('TimeoutError')
        const stopped = new Error('the caller stopped')
        const controller = new AbortController()
        setTimeout(() => controller.abort(stopped), 20)
        expect(await call(controller.signal).catch((error: unknown) => error)).toBe(stopped)
      }
    } finally {
      await silent.close()
    }
  })

  it("ends a create's wait between attempts at once on abort", async () => {
    let calls = 0
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () => {
        calls++
        return new Response('', { status: 503, headers: { 'retry-after': '5' } })
      },
    })
    const started = Date.now()
    const failure = await client
      .createPlant({ id: 1n, name: 'a' }, { signal: AbortSignal.timeout(100) })
      .catch((error: unknown) => error)
    expect((failure as Error).name).toBe('TimeoutError')
    // Far short of the 5 s Retry-After: the wait did not run its course.
    expect(Date.now() - started).toBeLessThan(4_000)
    expect(calls).toBe(1)
  })

  it('waits no longer than 10 s between attempts, however many retries it is given', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    try {
      const times: number[] = []
      const client = createClient({
        baseUrl: 'http://127.0.0.1:1',
        token: 't',
        retries: 12,
        fetch: async () => {
          times.push(Date.now())
          return new Response('', { status: 503 })
        },
      })
      const failure = client.getPlant(1n).catch((error: unknown) => error)
      while (times.length < 13) await vi.advanceTimersByTimeAsync(1_000)
      expect(await failure).toMatchObject({ status: 503 })
      const waits = times.slice(1).map((time, i) => time - (times[i] as number))
      // 100 ms, then doubling, until the cap holds every wait after it.
      expect(waits.slice(0, 7)).toEqual([100, 200, 400, 800, 1600, 3200, 6400])
      expect(waits.slice(7)).toEqual([10_000, 10_000, 10_000, 10_000, 10_000])
    } finally {
      vi.useRealTimers()
    }
  })

  it.each([Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY])(
    'refuses retries: %s, which is no count of attempts (NaN would retry for ever)',
    (retries) => {
      expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', token: 't', retries })).toThrow(
        new RangeError(`retries must be a whole number from 0, not ${retries}`),
      )
    },
  )

  it('waits as long as Retry-After asks before trying a create again', async () => {
    const times: number[] = []
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () => {
        times.push(Date.now())
        if (times.length === 1) return new Response('', { status: 503, headers: { 'retry-after': '1' } })
        return new Response('{"id": 1, "name": "a"}', {
          status: 200,
          headers: { 'content-type': 'application/json' },
        })
      },
    })
    expect((await client.createPlant({ id: 1n, name: 'a' })).plant).toEqual({ id: 1n, name: 'a' })
    expect((times[1] as number) - (times[0] as number)).toBeGreaterThanOrEqual(950)
  })
})

describe('the typed client when the service asks it to slow down', () => {
  const limited = () =>
    new Response('{"error":42901,"message":"Too many requests."}', {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '0' },
    })

  it('tries a create and the reads again after a 429, and gives up with the 429 after its retries', async () => {
    const { client, made } = clientAnswering(limited, 2)
    for (const call of everyMethod(client)) {
      const failure = await call().catch((error: unknown) => error)
      expect(failure).toMatchObject({ status: 429, code: 42901 })
    }
    // Three attempts each for the creates, the list and the reads; one each for the four changes.
    expect(made.calls).toBe(3 * 6 + 4)
  })

  it('reads once the 429 has passed, with the same request', async () => {
    const urls: string[] = []
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async (request) => {
        urls.push(request.url)
        if (urls.length === 1) return limited()
        return new Response('[{"id": 9223372036854775807, "name": "a"}]', {
          status: 200,
          headers: { 'content-type': 'application/json' },
        })
      },
    })
    expect(await client.listPlants({ tag: ['x'], limit: 5 })).toEqual({
      plants: [{ id: 9223372036854775807n, name: 'a' }],
    })
    expect(urls).toEqual([
      'http://127.0.0.1:1/plants?tag=x&limit=5',
      'http://127.0.0.1:1/plants?tag=x&limit=5',
    ])
  })
})

describe('the typed client and what it cannot send', () => {
  const secret = 'pst_0123456789abcdef_SECRETsecretSECRET'

  it.each([
    ['a line break inside', `${secret.slice(0, 20)}\n${secret.slice(20)}`],
    ['a NUL', `${secret}\u0000`],
    ['a character past Latin-1', `${secret}\u2019`],
    ['nothing', ''],
  ])('refuses a token with %s at once, without showing the token', (_what, token) => {
    let failure: unknown
    try {
      createClient({ baseUrl: 'http://127.0.0.1:1', token })
        .getPlant(1n)
        .catch(() => {})
    } catch (error) {
      failure = error
    }
    expect(failure).toBeInstanceOf(TypeError)
    // The message and every property that a logger would write out.
    const written = `${(failure as Error).message} ${JSON.stringify({ ...(failure as object) })}`
    expect(written).not.toContain(secret.slice(20))
  })

  it('still takes a token read from a file with its line end, as a header would carry it', async () => {
    const sent: string[] = []
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: `${secret}\r\n`,
      fetch: async (request) => {
        sent.push(request.headers.get('authorization') ?? '')
        return new Response('{"id": 1, "name": "a"}', { headers: { 'content-type': 'application/json' } })
      },
    })
    await client.getPlant(1n)
    expect(sent).toEqual([`Bearer ${secret}`])
  })

  it('refuses a base URL with credentials at once, without showing them', () => {
    expect(() => createClient({ baseUrl: 'http://user:hunter2@127.0.0.1:1', token: 't' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    )
  })
})

describe("the typed client's errors", () => {
  it('carry the headers of the answer, such as the Retry-After of a 429 that outlasted the retries', async () => {
    const { client } = clientAnswering(
      () =>
        new Response('{"error":42901,"message":"Too many requests."}', {
          status: 429,
          headers: { 'content-type': 'application/json', 'retry-after': '0' },
        }),
      0,
    )
    const failure = await client.getPlant(1n).catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: 429, code: 42901 })
    expect((failure as PlantStoreError).headers.get('retry-after')).toBe('0')
  })

  it("carry a 401's challenge and a proxy's answer headers, and none when no answer came", async () => {
    const t = await makeApp(sqliteKind)
    try {
      const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
      const failure = await createClient({ baseUrl, token: 'pst_nope' })
        .getPlant(1n)
        .catch((error: unknown) => error)
      expect(failure).toMatchObject({ status: 401 })
      expect((failure as PlantStoreError).headers.get('www-authenticate')).toMatch(
        /^Bearer realm="plantstore"/,
      )
    } finally {
      await t.close()
    }
    const { client } = clientAnswering(
      () => new Response('<h1>Sign in</h1>', { headers: { 'content-type': 'text/html', 'x-proxy': 'yes' } }),
      0,
    )
    const unreadable = await client.getPlant(1n).catch((error: unknown) => error)
    expect((unreadable as PlantStoreError).headers.get('x-proxy')).toBe('yes')
    const unanswered = await createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    })
      .getPlant(1n)
      .catch((error: unknown) => error)
    expect([...(unanswered as PlantStoreError).headers]).toEqual([])
  })
})

describe('the exact JSON of the client', () => {
  /** The names of the properties the published document types int64, wherever they are. */
  function int64Properties(schema: unknown, found = new Set<string>()): Set<string> {
    if (Array.isArray(schema)) for (const item of schema) int64Properties(item, found)
    else if (typeof schema === 'object' && schema !== null) {
      const { properties } = schema as { properties?: Record<string, { format?: unknown }> }
      for (const [name, property] of Object.entries(properties ?? {}))
        if (
          property.format === 'int64' ||
          (property as { items?: { format?: unknown } }).items?.format === 'int64'
        )
          found.add(name)
      for (const value of Object.values(schema)) int64Properties(value, found)
    }
    return found
  }

  it('parses every property the document types int64 as the bigint its type says', async () => {
    expect([...int64Properties(await publishedDocument())].sort()).toEqual([...INT64_FIELDS].sort())
    // The answer to a webhook replay, typed { queued: bigint }.
    expect(parseExactJson('{"queued": 2}')).toEqual({ queued: 2n })
    // A list of ids, typed bigint[]; another list's numbers stay numbers.
    expect(parseExactJson('{"deleted": [9223372036854775807, -1], "other": [1]}')).toEqual({
      deleted: [9223372036854775807n, -1n],
      other: [1],
    })
  })
})

describe('the client package', () => {
  it('is exported as plantstore/client from the build', async () => {
    const shipped = await import('plantstore/client')
    expect(typeof shipped.createClient).toBe('function')
    expect(shipped.parseExactJson('{"id":9223372036854775807,"error":40402}')).toEqual({
      id: 9223372036854775807n,
      error: 40402,
    })
  })

  it('are current: regenerating them from the document changes nothing', async () => {
    // What `npm run client:generate` writes, made in this process rather than by a tsx process.
    const checkedIn = readFileSync(join(ROOT, 'src/client/schema.d.ts'), 'utf8')
    expect(await clientSchemaSource()).toBe(checkedIn)
  })
})
