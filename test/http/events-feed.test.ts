import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { appForSuite, errorOf, makeApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

interface Change {
  cursor: string
  type: string
  actor: Record<string, string> | null
  requestId: string | null
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}
interface FeedPage {
  data: Change[]
  next: string
}

const DAY = 24 * 60 * 60 * 1000

describe.each(storeKinds)('the change feed, GET /events, on $name', (kind) => {
  const t = appForSuite(kind, {}, ['plants:read', 'plants:write', 'events:read'])

  const write = (method: 'POST' | 'PUT' | 'DELETE', url: string, body?: string) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${t.bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: body }),
    })
  const feed = (query = '', as = t.bearer) =>
    t.app.inject({ method: 'GET', url: `/events${query}`, headers: { authorization: `Bearer ${as}` } })
  const pageOf = (body: string) => JSON.parse(body) as FeedPage
  /** Reads the feed from `after` to its end, `limit` at a time: every change, and the last next. */
  const readAll = async (after: string | undefined, limit: number, types = '') => {
    const changes: Change[] = []
    let cursor = after
    for (;;) {
      const res = await feed(`?limit=${limit}${types}${cursor === undefined ? '' : `&after=${cursor}`}`)
      expect(res.statusCode).toBe(200)
      const page = pageOf(res.body)
      changes.push(...page.data)
      if (page.data.length === 0) return { changes, next: page.next }
      cursor = page.next
    }
  }

  it('has a next even when empty, and then every change once, in commit order, with who made it', async () => {
    const empty = await feed()
    expect(empty.statusCode).toBe(200)
    expect(empty.headers['content-type']).toMatch(/^application\/json/)
    const start = pageOf(empty.body)
    expect(start.data).toEqual([])
    expect(typeof start.next).toBe('string')

    const made = [
      await write('POST', '/plants', '{"id": 1, "name": "a"}'),
      await write('POST', '/plants', '{"id": 2, "name": "b", "tag": "t"}'),
      await write('PUT', '/plants/1', '{"name": "A"}'),
      await write('DELETE', '/plants/2'),
    ]
    const { changes, next } = await readAll(start.next, 3)
    expect(changes.map(({ cursor: _c, ...rest }) => rest)).toEqual([
      {
        type: 'plant.created',
        time: expect.any(String),
        actor: { tokenId: t.bearer.split('_')[1] },
        requestId: made[0]?.headers['x-request-id'],
        before: null,
        after: { id: 1, name: 'a' },
      },
      expect.objectContaining({ type: 'plant.created', after: { id: 2, name: 'b', tag: 't' } }),
      expect.objectContaining({
        type: 'plant.updated',
        before: { id: 1, name: 'a' },
        after: { id: 1, name: 'A' },
      }),
      expect.objectContaining({ type: 'plant.deleted', before: { id: 2, name: 'b', tag: 't' }, after: null }),
    ])
    const cursors = changes.map((c) => Number(c.cursor))
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b))
    expect(new Set(cursors).size).toBe(4)
    // Read to the end, next stays where the last change is, and reading on from it finds nothing new.
    expect(next).toBe(changes.at(-1)?.cursor)
    expect(pageOf((await feed(`?after=${next}`)).body)).toEqual({ data: [], next })
    // Without after: from the oldest change kept, the same changes.
    expect(pageOf((await feed('?limit=1000')).body).data.map((c) => c.cursor)).toEqual(
      changes.map((c) => c.cursor),
    )
    // A change's cursor works as after too: the changes after it.
    const second = changes[1]?.cursor
    expect(pageOf((await feed(`?after=${second}`)).body).data.map((c) => c.cursor)).toEqual(
      changes.slice(2).map((c) => c.cursor),
    )
  })

  it('keeps only the types asked for, the parameter repeated, without reading the others again', async () => {
    const { next: start } = await readAll(undefined, 1000)
    await write('POST', '/plants', '{"id": 40, "name": "x"}')
    await write('PUT', '/plants/40', '{"name": "y"}')
    await write('DELETE', '/plants/40')
    const deletes = await feed(`?after=${start}&type=plant.deleted`)
    const page = pageOf(deletes.body)
    expect(page.data.map((c) => c.type)).toEqual(['plant.deleted'])
    const both = pageOf((await feed(`?after=${start}&type=plant.created&type=plant.updated`)).body)
    expect(both.data.map((c) => c.type)).toEqual(['plant.created', 'plant.updated'])
    // A filtered reader that read to the end moves on as far as the unfiltered one.
    const all = await readAll(start, 1000)
    expect(page.next).toBe(all.next)
    const filtered = await readAll(start, 1, '&type=plant.updated')
    expect(filtered.changes.map((c) => c.after?.name)).toEqual(['y'])
  })

  it('sends ids past 2^53 as exact integers, in the response text', async () => {
    const { next } = await readAll(undefined, 1000)
    await write('POST', '/plants', '{"id": -9223372036854775808, "name": "smallest"}')
    const res = await feed(`?after=${next}`)
    expect(res.body).toContain('"after":{"id":-9223372036854775808,"name":"smallest"}')
  })

  it('refuses what is no cursor with 40080, and a repeated cursor, a bad limit or type with 40012', async () => {
    for (const after of ['abc', '-1', '1.5', '01', '1e3', '99999999999999999', '']) {
      const res = await feed(`?after=${encodeURIComponent(after)}`)
      expect([after, res.statusCode, errorOf(res).error]).toEqual([after, 400, errors.CURSOR_INVALID.code])
      expect(errorOf(res).message).toMatch(/after/)
    }
    const cases = [
      '?after=1&after=2',
      '?limit=0',
      '?limit=1001',
      '?limit=x',
      '?type=plant.exploded',
      '?type=plant.created&type=webhook.test',
    ]
    for (const query of cases) {
      const res = await feed(query)
      expect([query, res.statusCode, errorOf(res).error]).toEqual([query, 400, errors.QUERY_INVALID.code])
    }
    expect(errorOf(await feed('?type=nope')).message).toBe(
      'The query parameter type must be one of plant.created, plant.updated, plant.deleted.',
    )
  })

  it('needs events:read: plants:read is not enough', async () => {
    const reader = await t.token(['plants:read', 'plants:write'])
    const res = await feed('', reader)
    expect([res.statusCode, errorOf(res).error]).toEqual([403, errors.SCOPE_MISSING.code])
    expect(res.headers['www-authenticate']).toContain('scope="events:read"')
    const post = await t.app.inject({ method: 'POST', url: '/events' })
    expect(post.statusCode).toBe(405)
    expect(post.headers.allow).toBe('GET, HEAD')
  })
})

describe.each(storeKinds)('the change feed past retention on $name', (kind) => {
  it('answers 410 to a cursor below what retention deleted, and reads on from a newer one or from the oldest kept', async () => {
    const t = await makeApp(kind)
    try {
      const token = await t.token(['plants:read', 'plants:write', 'events:read'])
      const headers = { authorization: `Bearer ${token}` }
      const feed = (query: string) => t.app.inject({ method: 'GET', url: `/events${query}`, headers })
      for (const id of [1, 2, 3]) {
        await t.app.inject({
          method: 'POST',
          url: '/plants',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: `{"id": ${id}, "name": "p${id}"}`,
        })
      }
      const before = JSON.parse((await feed('')).body) as FeedPage
      expect(before.data).toHaveLength(3)
      const first = before.data[0]?.cursor as string

      // Every event so far is fanned out and older than the cut: the sweep deletes them all.
      const now = new Date()
      await t.store.webhooks.fanOut(100, now)
      const swept = await t.store.maintenance.sweep({
        now,
        eventsBefore: new Date(now.getTime() + DAY),
        tokensBefore: new Date(0),
      })
      expect(swept.events).toBe(3)

      for (const after of ['0', first]) {
        const gone = await feed(`?after=${after}`)
        expect([after, gone.statusCode, errorOf(gone).error]).toEqual([
          after,
          410,
          errors.CURSOR_EXPIRED.code,
        ])
      }
      // The last change's cursor lost nothing after it, and neither does a reader with no cursor.
      const last = await feed(`?after=${before.next}`)
      expect([last.statusCode, (JSON.parse(last.body) as FeedPage).data]).toEqual([200, []])
      const fresh = await feed('')
      expect(fresh.statusCode).toBe(200)
      expect((JSON.parse(fresh.body) as FeedPage).data).toEqual([])
    } finally {
      await t.close()
    }
  })
})
