import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { createJwtVerifier } from '../../src/tokens/jwt.js'
import { appForSuite, errorOf, makeApp } from '../helpers/app.js'
import { AUDIENCE, ISSUER, serveJwks, signingKey, signJwt } from '../helpers/jwks.js'
import { sqliteKind, storeKinds } from '../helpers/stores.js'

interface Change {
  cursor: string
  type: string
  time: string
  actor: Record<string, string> | null
  requestId: string | null
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

/** The public id of an opaque token: what a change records as its actor. */
const tokenIdOf = (token: string) => token.split('_')[1]

describe.each(storeKinds)("a plant's history on $name", (kind) => {
  const t = appForSuite(kind)

  const send = (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: string, as = t.bearer) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${as}`,
        ...(body === undefined
          ? {}
          : { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: body }),
    })
  const history = (url: string, as = t.bearer) =>
    t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${as}` } })
  const changesOf = (body: string) => (JSON.parse(body) as { data: Change[] }).data

  it('lists create, replace, patch and delete newest first, each with its actor, request id and both plants, after the delete too', async () => {
    const made = [
      await send('POST', '/plants', '{"id": 10, "name": "fern", "tag": "green"}'),
      await send('PUT', '/plants/10', '{"name": "Fern"}'),
      await send('PATCH', '/plants/10', '{"tag": "shade"}'),
      await send('DELETE', '/plants/10'),
    ]
    expect(made.map((r) => r.statusCode)).toEqual([200, 200, 200, 204])
    const res = await history('/plants/10/history')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.headers.link).toBeUndefined()
    const changes = changesOf(res.body)
    const actor = { tokenId: tokenIdOf(t.bearer) }
    expect(changes.map(({ cursor: _c, time: _t, ...rest }) => rest)).toEqual([
      {
        type: 'plant.deleted',
        actor,
        requestId: made[3]?.headers['x-request-id'],
        before: { id: 10, name: 'Fern', tag: 'shade' },
        after: null,
      },
      {
        type: 'plant.updated',
        actor,
        requestId: made[2]?.headers['x-request-id'],
        before: { id: 10, name: 'Fern' },
        after: { id: 10, name: 'Fern', tag: 'shade' },
      },
      {
        type: 'plant.updated',
        actor,
        requestId: made[1]?.headers['x-request-id'],
        before: { id: 10, name: 'fern', tag: 'green' },
        after: { id: 10, name: 'Fern' },
      },
      {
        type: 'plant.created',
        actor,
        requestId: made[0]?.headers['x-request-id'],
        before: null,
        after: { id: 10, name: 'fern', tag: 'green' },
      },
    ])
    // Newest first: cursors and times never grow down the page.
    const seqs = changes.map((c) => Number(c.cursor))
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a))
    for (const change of changes) expect(Number.isNaN(Date.parse(change.time))).toBe(false)
    expect(new Set(made.map((r) => r.headers['x-request-id'])).size).toBe(4)
  })

  it('records no change for a write that changes nothing, nor for a refused one', async () => {
    await send('POST', '/plants', '{"id": 11, "name": "same"}')
    expect((await send('PUT', '/plants/11', '{"name": "same"}')).statusCode).toBe(200)
    expect((await send('PUT', '/plants/11', '{"name": ""}')).statusCode).toBe(400)
    expect((await send('POST', '/plants', '{"id": 11, "name": "again"}')).statusCode).toBe(409)
    const changes = changesOf((await history('/plants/11/history')).body)
    expect(changes.map((c) => c.type)).toEqual(['plant.created'])
  })

  it('records a create under an Idempotency-Key once, with the first request, whether of one plant or a batch', async () => {
    const keyed = (url: string, body: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: `Bearer ${t.bearer}`,
          'content-type': 'application/json',
          'idempotency-key': `k-${url}`,
        },
        payload: body,
      })
    const first = await keyed('/plants', '{"id": 12, "name": "once"}')
    const replay = await keyed('/plants', '{"id": 12, "name": "once"}')
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const batch = await keyed('/plants/batch', '{"plants": [{"id": 13, "name": "b"}]}')
    await keyed('/plants/batch', '{"plants": [{"id": 13, "name": "b"}]}')
    for (const [id, made] of [
      [12, first],
      [13, batch],
    ] as const) {
      const changes = changesOf((await history(`/plants/${id}/history`)).body)
      expect(changes.map((c) => [c.type, c.actor, c.requestId])).toEqual([
        ['plant.created', { tokenId: tokenIdOf(t.bearer) }, made.headers['x-request-id']],
      ])
    }
  })

  it('keeps ids past 2^53 exact in before and after, as the text of the response', async () => {
    await send('POST', '/plants', '{"id": 9223372036854775807, "name": "largest"}')
    await send('PATCH', '/plants/9223372036854775807', '{"name": "Largest"}')
    const res = await history('/plants/9223372036854775807/history')
    expect(res.body).toContain(
      '"before":{"id":9223372036854775807,"name":"largest"},"after":{"id":9223372036854775807,"name":"Largest"}',
    )
    expect(res.body).toContain('"before":null,"after":{"id":9223372036854775807,"name":"largest"}')
    expect(changesOf((await history('/plants/-9223372036854775808/history')).body)).toEqual([])
  })

  it('records one change per plant of a batch, each with the batch request', async () => {
    const created = await send(
      'POST',
      '/plants/batch',
      '{"plants": [{"id": 20, "name": "a"}, {"id": 21, "name": "b"}]}',
    )
    const deleted = await send('POST', '/plants/batch-delete', '{"ids": [20, 21]}')
    for (const id of [20, 21]) {
      const changes = changesOf((await history(`/plants/${id}/history`)).body)
      expect(changes.map((c) => [c.type, c.requestId])).toEqual([
        ['plant.deleted', deleted.headers['x-request-id']],
        ['plant.created', created.headers['x-request-id']],
      ])
      expect(changes[1]?.after).toEqual({ id, name: id === 20 ? 'a' : 'b' })
    }
  })

  it('pages with limit and a Link to the next, older page, each change once, the last page without a Link', async () => {
    await send('POST', '/plants', '{"id": 30, "name": "v0"}')
    for (let v = 1; v <= 6; v++) await send('PUT', '/plants/30', `{"name": "v${v}"}`)
    const seen: string[] = []
    let url: string | undefined = '/plants/30/history?limit=3'
    let pages = 0
    while (url !== undefined) {
      const res = await history(url)
      expect(res.statusCode).toBe(200)
      const page = changesOf(res.body)
      expect(page.length).toBeLessThanOrEqual(3)
      seen.push(...page.map((c) => String(c.after?.name ?? c.before?.name)))
      const link = res.headers.link as string | undefined
      if (link !== undefined)
        expect(link).toMatch(/^<\/plants\/30\/history\?limit=3&before=\d+>; rel="next"$/)
      url = link === undefined ? undefined : /^<([^>]+)>/.exec(link)?.[1]
      pages++
    }
    expect(seen).toEqual(['v6', 'v5', 'v4', 'v3', 'v2', 'v1', 'v0'])
    expect(pages).toBe(3)
  })

  it('is empty, not 404, for an id with no change kept', async () => {
    const res = await history('/plants/424242/history')
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('{"data":[]}')
  })

  it('refuses what is no cursor, a repeated one, a bad limit and a bad path id, each precisely', async () => {
    for (const before of ['abc', '-1', '1.5', '01', '99999999999999999', '']) {
      const res = await history(`/plants/10/history?before=${encodeURIComponent(before)}`)
      expect([before, res.statusCode, errorOf(res).error]).toEqual([before, 400, errors.CURSOR_INVALID.code])
      expect(errorOf(res).message).toMatch(/before/)
    }
    const cases: Array<[string, number]> = [
      ['/plants/10/history?before=1&before=2', errors.QUERY_INVALID.code],
      ['/plants/10/history?limit=0', errors.QUERY_INVALID.code],
      ['/plants/10/history?limit=501', errors.QUERY_INVALID.code],
      ['/plants/ten/history', errors.PATH_ID_INVALID.code],
      ['/plants/9223372036854775808/history', errors.PATH_ID_INVALID.code],
    ]
    for (const [url, code] of cases) {
      const res = await history(url)
      expect([url, res.statusCode, errorOf(res).error]).toEqual([url, 400, code])
    }
  })

  it('needs plants:read, and answers 405 with Allow to a write', async () => {
    const writer = await t.token(['plants:write', 'events:read'])
    const res = await history('/plants/10/history', writer)
    expect([res.statusCode, errorOf(res).error]).toEqual([403, errors.SCOPE_MISSING.code])
    const post = await send('POST', '/plants/10/history', '{}')
    expect(post.statusCode).toBe(405)
    expect(post.headers.allow).toBe('GET, HEAD')
  })
})

describe("a plant's history of changes made with a JWT", () => {
  it("records the JWT's issuer and subject as the actor, never the JWT", async () => {
    const key = await signingKey('ES256', 'ec-1')
    const jwks = await serveJwks([key])
    const t = await makeApp(sqliteKind, {
      jwts: createJwtVerifier({
        jwksUrl: jwks.url,
        issuer: ISSUER,
        audience: AUDIENCE,
        scopeClaim: 'scope',
        clockToleranceMs: 0,
      }),
    })
    try {
      const jwt = await signJwt(key, { sub: 'alice', scope: 'plants:read plants:write' })
      const headers = { authorization: `Bearer ${jwt}` }
      const created = await t.app.inject({
        method: 'POST',
        url: '/plants',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{"id": 1, "name": "a"}',
      })
      expect(created.statusCode).toBe(200)
      const res = await t.app.inject({ method: 'GET', url: '/plants/1/history', headers })
      const [change] = (JSON.parse(res.body) as { data: Change[] }).data
      expect(change?.actor).toEqual({ iss: ISSUER, sub: 'alice' })
      expect(change?.requestId).toBe(created.headers['x-request-id'])
      expect(res.body).not.toContain(jwt.split('.')[2])
    } finally {
      await t.close()
      await jwks.close()
    }
  })
})
