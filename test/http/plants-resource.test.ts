import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { errorOf, makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('the plant resource on $name', (kind) => {
  let t: TestApp
  let token: string
  let reader: string
  beforeAll(async () => {
    t = await makeApp(kind)
    token = await t.token()
    reader = await t.token(['plants:read'])
  })
  afterAll(() => t.close())

  const call = (
    method: 'GET' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD',
    url: string,
    options: { body?: string; headers?: Record<string, string>; as?: string } = {},
  ) =>
    t.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${options.as ?? token}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { payload: options.body }),
    })
  const create = async (id: string, name: string, tag?: string) => {
    const body =
      tag === undefined ? `{"id":${id},"name":"${name}"}` : `{"id":${id},"name":"${name}","tag":"${tag}"}`
    const res = await postPlant(t.app, token, body)
    expect(res.statusCode).toBe(200)
    return res
  }

  describe('GET /plants', () => {
    const base = 1_000_000n
    beforeAll(async () => {
      for (let i = 0n; i < 7n; i++) await create(String(base + i), `p${i}`, i % 2n === 0n ? 'even' : 'odd')
      await create('-9223372036854775808', 'smallest', 'edge')
      await create('9223372036854775807', 'largest', 'edge')
    })

    it('answers a plain array ordered by id, exact at both ends of int64', async () => {
      const res = await call('GET', '/plants?tag=edge')
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(
        '[{"id":-9223372036854775808,"name":"smallest","tag":"edge"},{"id":9223372036854775807,"name":"largest","tag":"edge"}]',
      )
      expect(res.headers.link).toBeUndefined()
    })

    it('pages with after= and announces the next page in a Link header, none on the last', async () => {
      const seen: string[] = []
      let url: string | undefined = '/plants?limit=2&tag=odd'
      let pages = 0
      while (url) {
        const res = await call('GET', url)
        expect(res.statusCode).toBe(200)
        for (const p of JSON.parse(res.body) as Array<{ name: string }>) seen.push(p.name)
        const link = res.headers.link as string | undefined
        url = link ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] as string) : undefined
        pages++
      }
      expect(seen).toEqual(['p1', 'p3', 'p5'])
      expect(pages).toBe(2)
      // A page that ends exactly at the last plant announces nothing: no empty page to fetch.
      const exact = await call('GET', '/plants?limit=3&tag=odd')
      expect(JSON.parse(exact.body)).toHaveLength(3)
      expect(exact.headers.link).toBeUndefined()
    })

    it('walks every plant in id order across pages', async () => {
      const first = await call('GET', `/plants?limit=2&after=${base}`)
      expect(JSON.parse(first.body).map((p: { name: string }) => p.name)).toEqual(['p1', 'p2'])
      // The next page is named by a cursor, which the link carries instead of the last id.
      const link = /^<(\/plants\?limit=2&cursor=[A-Za-z0-9_-]+)>; rel="next"$/.exec(
        String(first.headers.link),
      )
      const second = await call('GET', link?.[1] as string)
      expect(JSON.parse(second.body).map((p: { name: string }) => p.name)).toEqual(['p3', 'p4'])
      const last = await call('GET', '/plants?after=9223372036854775806')
      expect(JSON.parse(last.body)).toHaveLength(1)
      expect((await call('GET', '/plants?after=9223372036854775807')).body).toBe('[]')
    })

    it('defaults to 100 per page', async () => {
      const res = await call('GET', '/plants')
      expect(JSON.parse(res.body)).toHaveLength(9)
    })

    it.each([
      'limit=0',
      'limit=1001',
      'limit=-1',
      'limit=1.5',
      'limit=abc',
      'limit=',
      'limit=01',
      'limit=1&limit=2',
      'after=9223372036854775808',
      'after=x',
      'after=1e3',
      'tag=',
      'tag=%00',
      'tag=a%0Ab',
      `tag=${'t'.repeat(101)}`,
      // Percent-escapes that are not UTF-8: read as literal text they would match the tag "%FF".
      'tag=%FF',
      'tag=%E9t%C3%A9',
      'tag=%',
      'tag=%ED%A0%80',
      'limit=1&x=%C0%80',
    ])('answers 400 for %s', async (query) => {
      const res = await call('GET', `/plants?${query}`)
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(errors.QUERY_INVALID.code)
    })

    it.each(['tag=', `tag=${'t'.repeat(101)}`])('says what is wrong with %s', async (query) => {
      expect(errorOf(await call('GET', `/plants?${query}`)).message).toBe(
        'The query parameter tag must be 1 to 100 characters long.',
      )
    })

    it('decodes the query: a tag spelled with escapes and + matches its text', async () => {
      const res = await call('GET', '/plants?tag=%65%64g%65&limit=1')
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('[{"id":-9223372036854775808,"name":"smallest","tag":"edge"}]')
      expect((await call('GET', '/plants?tag=%25FF')).body).toBe('[]')
      expect((await call('GET', '/plants?tag=a+b')).body).toBe('[]')
    })

    it('matches a tag exactly as stored: case, and each Unicode spelling, count', async () => {
      await create('2000001', 'nfc', 'Caf\u00e9')
      await create('2000002', 'nfd', 'Cafe\u0301')
      await create('2000003', 'lower', 'caf\u00e9')
      const ids = async (tag: string) =>
        (
          JSON.parse((await call('GET', `/plants?tag=${encodeURIComponent(tag)}`)).body) as { id: number }[]
        ).map((p) => p.id)
      expect(await ids('Caf\u00e9')).toEqual([2000001])
      expect(await ids('Cafe\u0301')).toEqual([2000002])
      expect(await ids('caf\u00e9')).toEqual([2000003])
      expect(await ids('CAF\u00c9')).toEqual([])
      // Stored as sent, not normalized: the decomposed tag comes back decomposed.
      expect((await call('GET', '/plants/2000002')).body).toBe(
        '{"id":2000002,"name":"nfd","tag":"Cafe\u0301"}',
      )
    })

    it('accepts limit 1 and 1000', async () => {
      expect(JSON.parse((await call('GET', '/plants?limit=1')).body)).toHaveLength(1)
      expect((await call('GET', '/plants?limit=1000')).statusCode).toBe(200)
    })

    it('needs plants:read', async () => {
      const writer = await t.token(['plants:write'])
      const res = await call('GET', '/plants', { as: writer })
      expect(res.statusCode).toBe(403)
      expect(errorOf(res).error).toBe(errors.SCOPE_MISSING.code)
      expect((await t.app.inject({ method: 'GET', url: '/plants' })).statusCode).toBe(401)
    })
  })

  describe('GET /plants/{id}', () => {
    it('carries an ETag and answers 304 to a matching If-None-Match', async () => {
      await create('100', 'Monstera', 'aroid')
      const res = await call('GET', '/plants/100')
      expect(res.statusCode).toBe(200)
      const etag = res.headers.etag as string
      expect(etag).toMatch(/^"1-[A-Za-z0-9_-]+"$/)
      const again = await call('GET', '/plants/100', { headers: { 'if-none-match': etag } })
      expect(again.statusCode).toBe(304)
      expect(again.body).toBe('')
      expect(again.headers.etag).toBe(etag)
      const weak = await call('GET', '/plants/100', { headers: { 'if-none-match': `"x", W/${etag}` } })
      expect(weak.statusCode).toBe(304)
      expect((await call('GET', '/plants/100', { headers: { 'if-none-match': '"other"' } })).statusCode).toBe(
        200,
      )
      expect((await call('GET', '/plants/100', { headers: { 'if-none-match': '*' } })).statusCode).toBe(304)
    })

    it('answers 412 to an If-Match the plant no longer has, before looking at If-None-Match', async () => {
      const etag = (await call('GET', '/plants/100')).headers.etag as string
      for (const ifMatch of [etag, `"x", ${etag}`, '*']) {
        expect((await call('GET', '/plants/100', { headers: { 'if-match': ifMatch } })).statusCode).toBe(200)
      }
      for (const ifMatch of ['"other"', `W/${etag}`]) {
        const res = await call('GET', '/plants/100', {
          headers: { 'if-match': ifMatch, 'if-none-match': etag },
        })
        expect(res.statusCode).toBe(412)
        expect(errorOf(res).error).toBe(errors.PRECONDITION_FAILED.code)
      }
      const both = await call('GET', '/plants/100', { headers: { 'if-match': etag, 'if-none-match': etag } })
      expect(both.statusCode).toBe(304)
      const head = await call('HEAD', '/plants/100', { headers: { 'if-match': '"other"' } })
      expect(head.statusCode).toBe(412)
    })

    it('answers HEAD with the headers of GET', async () => {
      const res = await call('HEAD', '/plants/100')
      expect(res.statusCode).toBe(200)
      expect(res.headers.etag).toMatch(/^"1-/)
    })

    it('answers a HEAD with a matching If-None-Match as GET does: 304 without Content-Length', async () => {
      const etag = (await call('GET', '/plants/100')).headers.etag as string
      const get = await call('GET', '/plants/100', { headers: { 'if-none-match': etag } })
      const head = await call('HEAD', '/plants/100', { headers: { 'if-none-match': etag } })
      expect(head.statusCode).toBe(304)
      expect(head.body).toBe('')
      expect(head.headers.etag).toBe(etag)
      // RFC 9110 §8.6: a 304 may only carry the length a 200 would have; 0 would be wrong.
      expect(head.headers['content-length']).toBeUndefined()
      const names = (res: typeof get) =>
        Object.keys(res.headers)
          .filter((name) => !['x-request-id', 'date'].includes(name) && !name.startsWith('ratelimit'))
          .sort()
      expect(names(head)).toEqual(names(get))
    })

    it('gives the create answer the ETag a read gives', async () => {
      const created = await create('101', 'Fern')
      expect(created.headers.etag).toBe((await call('GET', '/plants/101')).headers.etag)
    })
  })

  describe('PUT /plants/{id}', () => {
    it('replaces name and tag, and no tag means none', async () => {
      await create('200', 'old', 'x')
      const res = await call('PUT', '/plants/200', { body: '{"name":"new"}' })
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('{"id":200,"name":"new"}')
      expect(res.headers.etag).toMatch(/^"2-/)
      expect((await call('GET', '/plants/200')).body).toBe('{"id":200,"name":"new"}')
      const tagged = await call('PUT', '/plants/200', { body: '{"id":200,"name":"new","tag":"t","extra":1}' })
      expect(tagged.body).toBe('{"id":200,"name":"new","tag":"t"}')
    })

    it('refuses an id in the body that is not the path id', async () => {
      const res = await call('PUT', '/plants/200', { body: '{"id":201,"name":"moved"}' })
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(errors.ID_MISMATCH.code)
    })

    it.each([
      ['{}', errors.NAME_INVALID],
      ['{"name":""}', errors.NAME_LENGTH],
      ['{"name":"a","tag":null}', errors.TAG_INVALID],
      ['{"name":"a","id":"200"}', errors.ID_INVALID],
      ['[]', errors.BODY_NOT_OBJECT],
      ['2.5', errors.BODY_NOT_OBJECT],
      ['', errors.BODY_MISSING],
    ])('answers 400 for %s', async (body, entry) => {
      const res = await call('PUT', '/plants/200', { body })
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(entry.code)
    })

    it('answers 404 for a plant that does not exist and creates nothing', async () => {
      const res = await call('PUT', '/plants/299', { body: '{"name":"ghost"}' })
      expect(res.statusCode).toBe(404)
      expect(errorOf(res).error).toBe(errors.PLANT_NOT_FOUND.code)
      expect((await call('GET', '/plants/299')).statusCode).toBe(404)
    })

    it('needs plants:write', async () => {
      const res = await call('PUT', '/plants/200', { body: '{"name":"x"}', as: reader })
      expect(res.statusCode).toBe(403)
    })
  })

  describe('PATCH /plants/{id}', () => {
    it('changes only what the merge patch names; tag null removes the tag', async () => {
      await create('300', 'Pothos', 'vine')
      const renamed = await call('PATCH', '/plants/300', {
        body: '{"name":"Golden pothos"}',
        headers: { 'content-type': 'application/merge-patch+json' },
      })
      expect(renamed.statusCode).toBe(200)
      expect(renamed.body).toBe('{"id":300,"name":"Golden pothos","tag":"vine"}')
      const untagged = await call('PATCH', '/plants/300', { body: '{"tag":null}' })
      expect(untagged.body).toBe('{"id":300,"name":"Golden pothos"}')
      expect((await call('GET', '/plants/300')).body).toBe('{"id":300,"name":"Golden pothos"}')
      const retagged = await call('PATCH', '/plants/300', { body: '{"tag":"aroid","id":300}' })
      expect(retagged.body).toBe('{"id":300,"name":"Golden pothos","tag":"aroid"}')
      expect(retagged.headers.etag).toMatch(/^"4-/)
      const unchanged = await call('PATCH', '/plants/300', { body: '{}' })
      expect(unchanged.statusCode).toBe(200)
      expect(unchanged.headers.etag).toBe(retagged.headers.etag)
    })

    it.each([
      ['{"name":null}', errors.NAME_INVALID],
      ['{"tag":""}', errors.TAG_LENGTH],
      ['{"tag":5}', errors.TAG_INVALID],
      ['{"id":301}', errors.ID_MISMATCH],
      ['"x"', errors.BODY_NOT_OBJECT],
      ['1.5', errors.BODY_NOT_OBJECT],
      ['-0', errors.BODY_NOT_OBJECT],
    ])('answers 400 for %s', async (body, entry) => {
      const res = await call('PATCH', '/plants/300', { body })
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(entry.code)
    })

    it('takes application/merge-patch+json only for PATCH', async () => {
      const headers = { 'content-type': 'application/merge-patch+json' }
      const put = await call('PUT', '/plants/300', { body: '{"name":"x"}', headers })
      expect(put.statusCode).toBe(415)
      // Accept-Patch lists what a PATCH takes; on another method it would not mean anything.
      expect(put.headers['accept-patch']).toBeUndefined()
      const post = await postPlant(t.app, token, '{"id": 390, "name": "x"}', headers)
      expect(post.statusCode).toBe(415)
      expect(errorOf(post).error).toBe(errors.UNSUPPORTED_MEDIA_TYPE.code)
    })

    it.each([
      ['a body that is not JSON', 'text/plain'],
      ['JSON in another charset', 'application/json; charset=utf-16'],
    ])('answers 415 for %s, with the patch formats it takes in Accept-Patch', async (_what, type) => {
      const res = await call('PATCH', '/plants/300', { body: 'tag=x', headers: { 'content-type': type } })
      expect(res.statusCode).toBe(415)
      expect(res.headers['accept-patch']).toBe('application/merge-patch+json, application/json')
    })

    it('answers 404 for a plant that does not exist', async () => {
      expect((await call('PATCH', '/plants/399', { body: '{"name":"x"}' })).statusCode).toBe(404)
    })
  })

  describe('DELETE /plants/{id}', () => {
    it('answers 204, then 404', async () => {
      await create('400', 'Cactus')
      const res = await call('DELETE', '/plants/400')
      expect(res.statusCode).toBe(204)
      expect(res.body).toBe('')
      expect((await call('GET', '/plants/400')).statusCode).toBe(404)
      const again = await call('DELETE', '/plants/400')
      expect(again.statusCode).toBe(404)
      expect(errorOf(again).error).toBe(errors.PLANT_NOT_FOUND.code)
    })

    it('frees the id for a new create, whose ETag differs from the old one', async () => {
      const first = await create('401', 'one')
      await call('DELETE', '/plants/401')
      const second = await create('401', 'two')
      expect(second.headers.etag).not.toBe(first.headers.etag)
    })

    it('needs plants:write', async () => {
      expect((await call('DELETE', '/plants/401', { as: reader })).statusCode).toBe(403)
    })
  })

  describe('If-Match', () => {
    it.each([
      ['PUT', '{"name":"b"}'],
      ['PATCH', '{"name":"b"}'],
      ['DELETE', undefined],
    ] as const)('makes %s answer 412 on a stale ETag and write nothing', async (method, body) => {
      const id = `50${method.length}`
      const created = await create(id, 'a')
      const stale = created.headers.etag as string
      await call('PATCH', `/plants/${id}`, { body: '{"tag":"moved"}' })
      const res = await call(method, `/plants/${id}`, { body, headers: { 'if-match': stale } })
      expect(res.statusCode).toBe(412)
      expect(errorOf(res).error).toBe(errors.PRECONDITION_FAILED.code)
      expect((await call('GET', `/plants/${id}`)).body).toBe(`{"id":${id},"name":"a","tag":"moved"}`)
      const current = (await call('GET', `/plants/${id}`)).headers.etag as string
      const ok = await call(method, `/plants/${id}`, { body, headers: { 'if-match': `"nope", ${current}` } })
      expect(ok.statusCode).toBe(method === 'DELETE' ? 204 : 200)
    })

    it('takes a header that is not a list of entity tags for one that names none', async () => {
      const created = await create('530', 'strict')
      const etag = created.headers.etag as string
      // A no-break space is not whitespace to HTTP: `\u00a0*` is neither `*` nor a list.
      for (const malformed of [`junk${etag}`, `${etag}${etag}`, `${etag} x`, '\u00a0*']) {
        const res = await call('PUT', '/plants/530', {
          body: '{"name":"b"}',
          headers: { 'if-match': malformed },
        })
        expect(res.statusCode).toBe(412)
        const read = await call('GET', '/plants/530', { headers: { 'if-none-match': malformed } })
        expect(read.statusCode).toBe(200)
        expect(read.body).toBe('{"id":530,"name":"strict"}')
      }
      const listed = await call('PUT', '/plants/530', {
        body: '{"name":"b"}',
        headers: { 'if-match': ` "nope" ,, ${etag} ` },
      })
      expect(listed.statusCode).toBe(200)
    })

    it('lets exactly one of two writers holding the same ETag win', async () => {
      const etag = (await create('510', 'race')).headers.etag as string
      const results = await Promise.all(
        ['x', 'y'].map((name) =>
          call('PUT', '/plants/510', { body: `{"name":"${name}"}`, headers: { 'if-match': etag } }),
        ),
      )
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 412])
    })

    it('matches any existing plant with *, never a weak tag, and answers 404 for a missing one', async () => {
      const etag = (await create('520', 'star')).headers.etag as string
      expect(
        (await call('PATCH', '/plants/520', { body: '{}', headers: { 'if-match': `W/${etag}` } })).statusCode,
      ).toBe(412)
      expect(
        (await call('PATCH', '/plants/520', { body: '{}', headers: { 'if-match': '*' } })).statusCode,
      ).toBe(200)
      // RFC 9110 §13.2.1: without the plant the answer is the 404 it would be without the header.
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
        const body = method === 'PUT' || method === 'PATCH' ? '{"name":"x"}' : undefined
        const res = await call(method, '/plants/529', { body, headers: { 'if-match': '*' } })
        expect([method, res.statusCode, errorOf(res).error]).toEqual([
          method,
          404,
          errors.PLANT_NOT_FOUND.code,
        ])
      }
    })
  })

  describe('If-None-Match on a write', () => {
    it.each([
      ['PUT', '{"name":"b"}'],
      ['PATCH', '{"name":"b"}'],
      ['DELETE', undefined],
    ] as const)(
      'makes %s answer 412 while the plant has one of the ETags, and write nothing',
      async (method, body) => {
        const id = `54${method.length}`
        const etag = (await create(id, 'a')).headers.etag as string
        // RFC 9110 §13.1.2: a write whose If-None-Match is false is not performed; `*` is false for any plant.
        for (const tags of ['*', etag, `"nope", W/${etag}`]) {
          const res = await call(method, `/plants/${id}`, { body, headers: { 'if-none-match': tags } })
          expect([tags, res.statusCode, errorOf(res)]).toEqual([
            tags,
            412,
            {
              error: errors.PRECONDITION_FAILED.code,
              message: 'The plant has one of the ETags If-None-Match names.',
            },
          ])
        }
        const read = await call('GET', `/plants/${id}`)
        expect([read.body, read.headers.etag]).toEqual([`{"id":${id},"name":"a"}`, etag])
        const ok = await call(method, `/plants/${id}`, { body, headers: { 'if-none-match': '"nope"' } })
        expect(ok.statusCode).toBe(method === 'DELETE' ? 204 : 200)
      },
    )

    it('names the header whose condition failed when a write carries both', async () => {
      const etag = (await create('548', 'a')).headers.etag as string
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        const body = method === 'DELETE' ? undefined : '{"name":"b"}'
        const noneFails = await call(method, '/plants/548', {
          body,
          headers: { 'if-match': etag, 'if-none-match': '*' },
        })
        const matchFails = await call(method, '/plants/548', {
          body,
          headers: { 'if-match': '"nope"', 'if-none-match': '*' },
        })
        expect([method, noneFails.statusCode, errorOf(noneFails).message]).toEqual([
          method,
          412,
          'The plant has one of the ETags If-None-Match names.',
        ])
        expect([method, matchFails.statusCode, errorOf(matchFails).message]).toEqual([
          method,
          412,
          errors.PRECONDITION_FAILED.message,
        ])
      }
      expect((await call('GET', '/plants/548')).body).toBe('{"id":548,"name":"a"}')
    })

    it('answers 404 for a missing plant whatever the If-None-Match', async () => {
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        const body = method === 'DELETE' ? undefined : '{"name":"x"}'
        const res = await call(method, '/plants/549', { body, headers: { 'if-none-match': '*' } })
        expect([method, res.statusCode]).toEqual([method, 404])
      }
    })
  })

  it.each(['PUT', 'PATCH', 'DELETE', 'GET'] as const)(
    'answers 400 to %s with a path id that is not an int64',
    async (method) => {
      for (const id of ['9223372036854775808', '-9223372036854775809', 'abc', '1.5', '-0', '01', '1e3']) {
        const body = method === 'PUT' || method === 'PATCH' ? '{"name":"a"}' : undefined
        const res = await call(method, `/plants/${id}`, { body })
        expect(res.statusCode).toBe(400)
        expect(errorOf(res).error).toBe(errors.PATH_ID_INVALID.code)
      }
    },
  )

  it.each(['PUT', 'PATCH'] as const)(
    '%s on an id nobody stored: 400 for an invalid body, 404 for a valid one (docs/errors.md)',
    async (method) => {
      const url = '/plants/777000111'
      const invalid = await call(method, url, { body: '{"name":""}' })
      expect(invalid.statusCode).toBe(400)
      expect(errorOf(invalid).error).toBe(errors.NAME_LENGTH.code)
      const valid = await call(method, url, { body: '{"name":"a"}', headers: { 'if-match': '*' } })
      expect(valid.statusCode).toBe(404)
      expect(errorOf(valid).error).toBe(errors.PLANT_NOT_FOUND.code)
      expect((await call('GET', url)).statusCode).toBe(404)
    },
  )

  it('marks authenticated answers Cache-Control: no-store', async () => {
    expect((await call('GET', '/plants')).headers['cache-control']).toBe('no-store')
    expect((await call('GET', '/plants/1')).headers['cache-control']).toBe('no-store')
  })

  it('compresses a large page when the client accepts it', async () => {
    for (let i = 0; i < 50; i++) await create(String(600 + i), `compressible plant number ${i}`, 'bulk')
    const plain = await call('GET', '/plants?tag=bulk')
    expect(plain.headers['content-encoding']).toBeUndefined()
    const zipped = await call('GET', '/plants?tag=bulk', { headers: { 'accept-encoding': 'gzip' } })
    expect(zipped.headers['content-encoding']).toBe('gzip')
    expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3)
    const { gunzipSync } = await import('node:zlib')
    expect(gunzipSync(zipped.rawPayload).toString()).toBe(plain.body)
    const small = await call('GET', '/plants/600', { headers: { 'accept-encoding': 'gzip' } })
    expect(small.headers['content-encoding']).toBeUndefined()
    // Every variant of a page says it depends on Accept-Encoding, the uncompressed ones too, or a
    // cache could answer a client that takes no gzip with a gzipped copy. A single plant never varies.
    expect(zipped.headers.vary).toBe('accept-encoding')
    expect(plain.headers.vary).toBe('accept-encoding')
    const shortPage = await call('GET', '/plants?tag=bulk&limit=1', {
      headers: { 'accept-encoding': 'gzip' },
    })
    expect(shortPage.headers['content-encoding']).toBeUndefined()
    expect(shortPage.headers.vary).toBe('accept-encoding')
    expect(small.headers.vary).toBeUndefined()
  })
})
