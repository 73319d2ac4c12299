import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Change, createClient, type PlantStoreClient, PlantStoreError } from '../../src/client/index.js'
import { errors } from '../../src/errors.js'
import { makeApp, type TestApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

/** The `after` of each GET /events a client sent ('' when it had none). */
const afterOf = (url: string) => new URL(url).searchParams.get('after') ?? ''

describe.each(storeKinds)("the typed client's history and change feed against $name", (kind) => {
  let t: TestApp
  let baseUrl: string
  let token: string
  /** The URLs of the feed requests sent, and a switch that makes the next one fail in transit. */
  const feedUrls: string[] = []
  let failNextFeedRead = false
  let client: PlantStoreClient
  beforeAll(async () => {
    t = await makeApp(kind)
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
    token = await t.token(['plants:read', 'plants:write', 'events:read'])
    client = createClient({
      baseUrl,
      token,
      retries: 0,
      fetch: async (request) => {
        if (new URL(request.url).pathname === '/events') {
          feedUrls.push(request.url)
          if (failNextFeedRead) {
            failNextFeedRead = false
            throw new TypeError('fetch failed', { cause: new Error('socket hang up') })
          }
        }
        return t.checkedFetch(request)
      },
    })
  })
  afterAll(() => t.close())

  /** Every change from the start of the feed to its end, without waiting. */
  const everything = async (options: Parameters<PlantStoreClient['changes']>[0] = {}) => {
    const seen: Change[] = []
    for await (const change of client.changes({ follow: false, ...options })) seen.push(change)
    return seen
  }

  it("reads a plant's history page by page, newest first, ids exact as bigints", async () => {
    const id = 9223372036854775807n
    await client.createPlant({ id, name: 'v0' })
    for (const name of ['v1', 'v2', 'v3']) await client.replacePlant(id, { name })
    await client.deletePlant(id)
    const first = await client.history(id, { limit: 2 })
    expect(first.changes.map((c) => c.type)).toEqual(['plant.deleted', 'plant.updated'])
    expect(first.changes[0]?.before).toEqual({ id, name: 'v3' })
    expect(first.changes[0]?.actor).toEqual({ tokenId: token.split('_')[1] })
    const names: string[] = []
    let before: string | undefined
    do {
      const page = await client.history(id, { limit: 2, ...(before === undefined ? {} : { before }) })
      names.push(...page.changes.map((c) => String((c.after ?? c.before)?.name)))
      before = page.next
    } while (before !== undefined)
    expect(names).toEqual(['v3', 'v3', 'v2', 'v1', 'v0'])
    expect(await client.history(12345n)).toEqual({ changes: [] })
  })

  it('iterates the feed in commit order, each change once, with only the types asked for', async () => {
    const all = await everything({ limit: 2 })
    expect(all.map((c) => c.type)).toEqual([
      'plant.created',
      'plant.updated',
      'plant.updated',
      'plant.updated',
      'plant.deleted',
    ])
    expect(all[0]?.after?.id).toBe(9223372036854775807n)
    expect(new Set(all.map((c) => c.cursor)).size).toBe(all.length)
    const deleted = await everything({ types: ['plant.deleted', 'plant.created'] })
    expect(deleted.map((c) => c.type)).toEqual(['plant.created', 'plant.deleted'])
    // From a change's cursor: the changes after it.
    expect((await everything({ after: all[2]?.cursor })).map((c) => c.cursor)).toEqual(
      all.slice(3).map((c) => c.cursor),
    )
  })

  it('reads on from the last change it yielded after a request fails in transit, missing and repeating none', async () => {
    const all = await everything()
    const start = all.at(-1)?.cursor as string
    for (let i = 1; i <= 5; i++) await client.createPlant({ id: BigInt(100 + i), name: `n${i}` })
    feedUrls.length = 0
    const seen: bigint[] = []
    for await (const change of client.changes({ after: start, limit: 2, pollIntervalMs: 10 })) {
      seen.push(change.after?.id as bigint)
      // The read of the second page fails once: the iterator waits and asks again from the same place.
      if (seen.length === 2) failNextFeedRead = true
      if (seen.length === 5) break
    }
    expect(seen).toEqual([101n, 102n, 103n, 104n, 105n])
    const afters = feedUrls.map(afterOf)
    expect(afters[0]).toBe(start)
    // The failed request and its retry ask for the same cursor: that of the last change yielded.
    expect(afters[1]).toBe(afters[2])
    // Five changes two at a time: three pages, and the one retry.
    expect(afters).toHaveLength(4)
  })

  it('waits for changes to come when it has read them all, and stops at once on its signal', async () => {
    const { next } = await client.changePage({ after: (await everything()).at(-1)?.cursor })
    const controller = new AbortController()
    const stopped = new Error('enough')
    const seen: Change[] = []
    const reading = (async () => {
      for await (const change of client.changes({
        after: next,
        pollIntervalMs: 20,
        signal: controller.signal,
      })) {
        seen.push(change)
        if (seen.length === 1) setTimeout(() => controller.abort(stopped), 50)
      }
    })()
    // Let it find the feed empty and wait at least once, then write.
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(seen).toEqual([])
    await client.createPlant({ id: 200n, name: 'late' })
    expect(await reading.catch((error: unknown) => error)).toBe(stopped)
    expect(seen.map((c) => [c.type, c.after?.id])).toEqual([['plant.created', 200n]])
  })

  it('throws what will not pass: a cursor never given out, a token without events:read', async () => {
    const bad = await client
      .changes({ after: 'nope' })
      .next()
      .catch((error: unknown) => error)
    expect(bad).toBeInstanceOf(PlantStoreError)
    expect(bad).toMatchObject({ status: 400, code: errors.CURSOR_INVALID.code })
    const reader = createClient({
      baseUrl,
      token: await t.token(['plants:read']),
      fetch: (request) => t.checkedFetch(request),
    })
    expect(await reader.changePage().catch((error: unknown) => error)).toMatchObject({
      status: 403,
      code: errors.SCOPE_MISSING.code,
    })
  })
})

describe('the change iterator when the service is away for a while', () => {
  it('keeps asking from the same place, as long as Retry-After says, until it gets a page', async () => {
    const urls: string[] = []
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: async (request) => {
        urls.push(request.url)
        if (urls.length <= 3)
          return new Response('{"error":50301,"message":"unavailable"}', {
            status: 503,
            headers: { 'content-type': 'application/json', 'retry-after': '0' },
          })
        return new Response(
          '{"data":[{"cursor":"8","type":"plant.created","time":"2026-01-01T00:00:00.000Z","actor":null,"requestId":null,"before":null,"after":{"id":-9223372036854775808,"name":"a"}}],"next":"8"}',
          { status: 200, headers: { 'content-type': 'application/json' } },
        )
      },
    })
    const first = await client.changes({ after: '7' }).next()
    expect(first.value).toMatchObject({ cursor: '8', after: { id: -9223372036854775808n, name: 'a' } })
    expect(urls.map(afterOf)).toEqual(['7', '7', '7', '7'])
  })

  it('reads on at once after an empty page that moved on past changes of other types', async () => {
    const urls: string[] = []
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async (request) => {
        urls.push(request.url)
        const body =
          urls.length === 1
            ? '{"data":[],"next":"10000"}'
            : '{"data":[{"cursor":"10003","type":"plant.deleted","time":"2026-01-01T00:00:00.000Z","actor":null,"requestId":null,"before":{"id":1,"name":"a"},"after":null}],"next":"10003"}'
        return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } })
      },
    })
    // A wait between the two reads would outlast the test.
    const first = await client.changes({ after: '0', pollIntervalMs: 600_000 }).next()
    expect(first.value).toMatchObject({ cursor: '10003' })
    expect(urls.map(afterOf)).toEqual(['0', '10000'])
  })

  it('gives up at once without follow', async () => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: async () => new Response('', { status: 502 }),
    })
    const failure = await client
      .changes({ follow: false })
      .next()
      .catch((error: unknown) => error)
    expect(failure).toMatchObject({ status: 502 })
  })

  it('refuses a page without its next cursor, as not from the service', async () => {
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      fetch: async () =>
        new Response('{"data":[]}', { status: 200, headers: { 'content-type': 'application/json' } }),
    })
    expect(await client.changePage().catch((error: unknown) => error)).toMatchObject({
      status: 200,
      message: 'HTTP 200 without a page of changes with its next cursor',
    })
  })
})

describe('the typed client against a server that is not the service', () => {
  /** A client whose every request is answered 200 with `body` and the headers given. */
  const answering = (body: string, headers: Record<string, string> = {}) =>
    createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: async () =>
        new Response(body, { status: 200, headers: { 'content-type': 'application/json', ...headers } }),
    })
  const failureOf = (promise: Promise<unknown>) => promise.catch((error: unknown) => error)

  it('refuses a history whose changes are not changes', async () => {
    expect(await failureOf(answering('{"data":[1]}').history(1n))).toMatchObject({
      status: 200,
      message: 'HTTP 200 without a list of changes',
    })
  })

  it('refuses a history page whose next link it cannot follow, or that leads back to the same page', async () => {
    const noBefore = '</plants/1/history?limit=2>; rel="next"'
    expect(await failureOf(answering('{"data":[]}', { link: noBefore }).history(1n))).toMatchObject({
      status: 200,
      message: `HTTP 200 without a cursor in its Link header: ${noBefore}`,
    })
    const same = answering('{"data":[]}', { link: '</plants/1/history?before=5>; rel="next"' })
    expect(await failureOf(same.history(1n, { before: '5' }))).toMatchObject({
      status: 200,
      message: 'HTTP 200 without a next cursor other than the one sent in its Link header: 5',
    })
    const next = answering('{"data":[]}', {
      link: '<http://elsewhere/plants/1/history?before=4#x>; rel="next"',
    })
    expect(await next.history(1n, { before: '5' })).toEqual({ changes: [], next: '4' })
  })

  it('stops following the feed at once, with its reason, when aborted while a read fails', async () => {
    const controller = new AbortController()
    const client = createClient({
      baseUrl: 'http://127.0.0.1:1',
      token: 't',
      retries: 0,
      fetch: async () => {
        controller.abort(new Error('stopped by the caller'))
        return new Response('', { status: 503 })
      },
    })
    const failure = await failureOf(client.changes({ signal: controller.signal }).next())
    expect(failure).toMatchObject({ message: 'stopped by the caller' })
  })
})
