import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { appForSuite, errorOf, makeApp, postPlant } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('POST /plants on $name', (kind) => {
  const t = appForSuite(kind)

  const get = (id: string) =>
    t.app.inject({ method: 'GET', url: `/plants/${id}`, headers: { authorization: `Bearer ${t.bearer}` } })

  it('creates a plant and answers 200 with exactly {id, name, tag}', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 10, "name": "Monstera", "tag": "aroid"}')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect(res.body).toBe('{"id":10,"name":"Monstera","tag":"aroid"}')
    expect((await get('10')).body).toBe('{"id":10,"name":"Monstera","tag":"aroid"}')
  })

  it('omits tag from the answer when the plant has none (never "tag": null)', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 11, "name": "Fern"}')
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('{"id":11,"name":"Fern"}')
  })

  it.each(['0', '-1', '9007199254740993', '9223372036854775807', '-9223372036854775808'])(
    'stores and echoes id %s digit for digit',
    async (id) => {
      const res = await postPlant(t.app, t.bearer, `{"id": ${id}, "name": "exact ${id}"}`)
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(`{"id":${id},"name":"exact ${id}"}`)
      const read = await get(id)
      expect(read.statusCode).toBe(200)
      expect(read.body).toBe(`{"id":${id},"name":"exact ${id}"}`)
    },
  )

  it('keeps 2^53+1 and 2^53 apart as two plants', async () => {
    expect((await postPlant(t.app, t.bearer, '{"id": 9007199254740995, "name": "odd"}')).statusCode).toBe(200)
    expect((await postPlant(t.app, t.bearer, '{"id": 9007199254740994, "name": "even"}')).statusCode).toBe(
      200,
    )
    expect(JSON.parse((await get('9007199254740995')).body).name).toBe('odd')
    expect(JSON.parse((await get('9007199254740994')).body).name).toBe('even')
  })

  it.each([
    ['9223372036854775808', errors.ID_INVALID],
    ['-9223372036854775809', errors.ID_INVALID],
    ['1.5', errors.ID_INVALID],
    ['"1"', errors.ID_INVALID],
    ['null', errors.ID_INVALID],
    ['true', errors.ID_INVALID],
    ['1e3', errors.ID_INVALID],
    ['1.0', errors.ID_INVALID],
    ['-0', errors.ID_INVALID],
    ['[1]', errors.ID_INVALID],
    ['{"n":1}', errors.ID_INVALID],
  ])('refuses id %s with 400', async (id, entry) => {
    const res = await postPlant(t.app, t.bearer, `{"id": ${id}, "name": "bad"}`)
    expect(res.statusCode).toBe(400)
    expect(errorOf(res).error).toBe(entry.code)
  })

  it.each([
    ['no body at all', undefined, errors.BODY_MISSING],
    ['an empty body', '', errors.BODY_MISSING],
    ['a body of JSON white space', ' \r\n\t ', errors.BODY_MISSING],
    // JSON's white space is four characters; any other is text that is not JSON.
    ['a body of a no-break space', '\u00a0', errors.BODY_MALFORMED],
    ['a body of a line separator', '\u2028', errors.BODY_MALFORMED],
    ['a body of a byte order mark', '\ufeff', errors.BODY_MALFORMED],
    ['malformed JSON', '{"id": 1, "name": ', errors.BODY_MALFORMED],
    ['trailing garbage', '{"id": 1, "name": "a"} x', errors.BODY_MALFORMED],
    ['duplicate keys', '{"id": 1, "id": 2, "name": "a"}', errors.BODY_MALFORMED],
    ['a key repeated with the same value', '{"id": 1, "name": "a", "name": "a"}', errors.BODY_MALFORMED],
    ['a repeated id with the same value', '{"id": 1, "name": "a", "id": 1}', errors.BODY_MALFORMED],
    ['a key repeated through an escape', '{"id": 1, "name": "a", "n\\u0061me": "a"}', errors.BODY_MALFORMED],
    [
      'a repeated key in an ignored field',
      '{"id": 1, "name": "a", "x": {"k": [], "k": []}}',
      errors.BODY_MALFORMED,
    ],
    ['an array', '[{"id": 1, "name": "a"}]', errors.BODY_NOT_OBJECT],
    ['a string', '"plant"', errors.BODY_NOT_OBJECT],
    ['null', 'null', errors.BODY_NOT_OBJECT],
    ['a number', '42', errors.BODY_NOT_OBJECT],
    ['a fraction', '1.5', errors.BODY_NOT_OBJECT],
    ['an exponent', '1e3', errors.BODY_NOT_OBJECT],
    ['a missing id', '{"name": "a"}', errors.ID_MISSING],
    ['a missing name', '{"id": 1}', errors.NAME_INVALID],
    ['a numeric name', '{"id": 1, "name": 1}', errors.NAME_INVALID],
    ['a null name', '{"id": 1, "name": null}', errors.NAME_INVALID],
    ['an empty name', '{"id": 1, "name": ""}', errors.NAME_LENGTH],
    ['a name of 201 characters', `{"id": 1, "name": "${'n'.repeat(201)}"}`, errors.NAME_LENGTH],
    ['a numeric tag', '{"id": 1, "name": "a", "tag": 5}', errors.TAG_INVALID],
    ['a null tag', '{"id": 1, "name": "a", "tag": null}', errors.TAG_INVALID],
    ['an empty tag', '{"id": 1, "name": "a", "tag": ""}', errors.TAG_LENGTH],
    ['a tag of 101 characters', `{"id": 1, "name": "a", "tag": "${'t'.repeat(101)}"}`, errors.TAG_LENGTH],
    ['a control character in name', '{"id": 1, "name": "a\\u0000b"}', errors.TEXT_CHARACTERS],
    ['a newline in tag', '{"id": 1, "name": "a", "tag": "x\\ny"}', errors.TEXT_CHARACTERS],
    ['a lone surrogate', '{"id": 1, "name": "a\\ud800"}', errors.TEXT_CHARACTERS],
  ])('answers 400 for %s', async (_what, body, entry) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/plants',
      headers: {
        authorization: `Bearer ${t.bearer}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: body }),
    })
    expect(res.statusCode).toBe(400)
    expect(errorOf(res)).toEqual({ error: entry.code, message: expect.any(String) })
    expect((await get('1')).statusCode).toBe(404)
  })

  it.each([
    ['a byte order mark', '\ufeff{"id": 1, "name": "a"}', 'JSON value expected but got U+FEFF at position 0'],
    [
      'a zero-width space',
      '{"id": 1,\u200b "name": "a"}',
      'Quoted object key expected but got U+200B at position 9',
    ],
    [
      'a no-break space',
      '{"id": 1,\u00a0"name": "a"}',
      'Quoted object key expected but got U+00A0 at position 9',
    ],
    ['a quote', "{'id': 1}", "Quoted object key expected but got ''' at position 1"],
    // The parser quotes one UTF-16 unit; a character past U+FFFF is two, and is named whole.
    ['an emoji', '{"id": 1, "name": "a"}\u{1f33f}', 'Expected end of input but got U+1F33F at position 22'],
    [
      'a repeated key',
      '{"\u00a0": 1, "\\ud83c": 2, "\u00a0": 3}',
      // A byte offset: the first no-break space is two bytes.
      'Duplicate key U+00A0 encountered at position 24',
    ],
    [
      'a repeated lone surrogate key',
      '{"\\ud83c": 1, "\\ud83c": 2}',
      'Duplicate key U+D83C encountered at position 15',
    ],
  ])(
    'names %s that stops the JSON by its code point when it would show as nothing',
    async (_what, body, detail) => {
      const res = await postPlant(t.app, t.bearer, body)
      expect(errorOf(res)).toEqual({
        error: errors.BODY_MALFORMED.code,
        message: `The request body is not valid JSON: ${detail}`,
      })
    },
  )

  it.each(['42', '1.5', '-9223372036854775809'])('names a number body as a number: %s', async (body) => {
    const res = await postPlant(t.app, t.bearer, body)
    expect(errorOf(res)).toEqual({
      error: errors.BODY_NOT_OBJECT.code,
      message: 'The request body must be a JSON object, not a number.',
    })
  })

  it('accepts names and tags at their bounds, counted in characters', async () => {
    const name = '🌿'.repeat(200)
    const res = await postPlant(t.app, t.bearer, JSON.stringify({ id: 12, name, tag: 'é'.repeat(100) }))
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body).name).toBe(name)
  })

  it('ignores unknown fields and does not store them', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 13, "name": "a", "color": "green", "n": 1.5}')
    expect(res.body).toBe('{"id":13,"name":"a"}')
    expect((await get('13')).body).toBe('{"id":13,"name":"a"}')
  })

  it('takes an ignored field nested 512 levels deep and refuses one level more, however it is nested', async () => {
    const nested = (depth: number, open: string, close: string) => open.repeat(depth) + close.repeat(depth)
    // The body object is the first level.
    expect(
      (await postPlant(t.app, t.bearer, `{"id": 1600, "name": "d", "x": ${nested(511, '[', ']')}}`))
        .statusCode,
    ).toBe(200)
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ]) {
      // Deep enough for the parser to run out of stack only sometimes, or always: the answer is the same.
      for (const depth of [512, 5000, 20000]) {
        const body = `{"id": 1601, "name": "d", "x": ${nested(depth, open as string, close as string)}}`
        if (body.length > 64 * 1024) continue
        const res = await postPlant(t.app, t.bearer, body)
        expect(errorOf(res)).toEqual({
          error: errors.BODY_MALFORMED.code,
          message: expect.stringContaining('nested deeper than 512 levels'),
        })
      }
    }
    expect((await get('1601')).statusCode).toBe(404)
  })

  it('cannot be polluted through __proto__ or constructor keys', async () => {
    const res = await postPlant(
      t.app,
      t.bearer,
      '{"id": 14, "name": "p", "__proto__": {"polluted": true, "tag": "x"}, "constructor": {"prototype": {"polluted": true}}}',
    )
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('{"id":14,"name":"p"}')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('answers 409 when the id exists, and keeps the first plant', async () => {
    await postPlant(t.app, t.bearer, '{"id": 15, "name": "first"}')
    const res = await postPlant(t.app, t.bearer, '{"id": 15, "name": "second"}')
    expect(res.statusCode).toBe(409)
    expect(errorOf(res).error).toBe(errors.PLANT_EXISTS.code)
    expect(JSON.parse((await get('15')).body).name).toBe('first')
  })

  it('gives exactly one 200 among 50 concurrent creates of one new id', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => postPlant(t.app, t.bearer, `{"id": 16, "name": "racer ${i}"}`)),
    )
    const statuses = results.map((r) => r.statusCode)
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(49)
  })

  it('treats application/json with a charset as JSON', async () => {
    const res = await postPlant(t.app, t.bearer, '{"id": 17, "name": "a"}', {
      'content-type': 'application/json; charset=utf-8',
    })
    expect(res.statusCode).toBe(200)
  })

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/jsonx',
    'multipart/form-data; boundary=x',
  ])('answers 415 for content type %s', async (type) => {
    const res = await postPlant(t.app, t.bearer, '{"id": 18, "name": "a"}', { 'content-type': type })
    expect(res.statusCode).toBe(415)
    expect(errorOf(res).error).toBe(errors.UNSUPPORTED_MEDIA_TYPE.code)
    expect((await get('18')).statusCode).toBe(404)
  })

  it('answers 415 for a body without a content type', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/plants',
      headers: { authorization: `Bearer ${t.bearer}` },
      payload: '{"id": 18, "name": "a"}',
    })
    expect(res.statusCode).toBe(415)
    errorOf(res)
  })

  it('answers 413 past the body limit', async () => {
    const res = await postPlant(
      t.app,
      t.bearer,
      JSON.stringify({ id: 19, name: 'a', pad: 'x'.repeat(70_000) }),
    )
    expect(res.statusCode).toBe(413)
    expect(errorOf(res).error).toBe(errors.BODY_TOO_LARGE.code)
  })

  it('answers 404 with the Error shape for unknown routes', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nowhere' })
    expect(res.statusCode).toBe(404)
    expect(errorOf(res).error).toBe(errors.ROUTE_NOT_FOUND.code)
  })

  it.each(['DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'M-SEARCH'] as const)(
    'answers 405 with Allow for %s /plants, before authentication',
    async (method) => {
      // light-my-request's method type leaves TRACE and the extension methods out; Node takes them.
      const res = await t.app.inject({ method: method as 'DELETE', url: '/plants' })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow).toBe('GET, HEAD, POST')
      expect(errorOf(res).error).toBe(errors.METHOD_NOT_ALLOWED.code)
    },
  )

  it.each([
    ['a malformed body', 'application/json', '{'],
    ['an oversized body', 'application/json', `{"pad":"${'x'.repeat(70_000)}"}`],
    ['a body of another media type', 'text/plain', 'x'],
  ])('orders errors: 404 and 405 before the body is read, even with %s', async (_what, type, payload) => {
    const send = (method: 'POST' | 'PUT', url: string) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${t.bearer}`, 'content-type': type },
        payload,
      })
    const unknown = await send('POST', '/nowhere')
    expect(unknown.statusCode).toBe(404)
    expect(errorOf(unknown).error).toBe(errors.ROUTE_NOT_FOUND.code)
    for (const [method, url, allow] of [
      ['PUT', '/plants', 'GET, HEAD, POST'],
      ['POST', '/plants/1', 'GET, HEAD, PUT, PATCH, DELETE'],
    ] as const) {
      const wrong = await send(method, url)
      expect(wrong.statusCode).toBe(405)
      expect(wrong.headers.allow).toBe(allow)
      expect(errorOf(wrong).error).toBe(errors.METHOD_NOT_ALLOWED.code)
    }
  })

  it('answers an extension method on a known path 405, and on an unknown path 404', async () => {
    const known = await t.app.inject({ method: 'LOCK' as 'GET', url: '/plants/1' })
    expect(known.statusCode).toBe(405)
    expect(known.headers.allow).toBe('GET, HEAD, PUT, PATCH, DELETE')
    const unknown = await t.app.inject({ method: 'LOCK' as 'GET', url: '/nowhere' })
    expect(unknown.statusCode).toBe(404)
    expect(errorOf(unknown).error).toBe(errors.ROUTE_NOT_FOUND.code)
  })

  it.each([
    ['POST', '/healthz'],
    ['PUT', '/readyz'],
    ['OPTIONS', '/healthz'],
    ['TRACE', '/readyz'],
    ['DELETE', '/metrics'],
    ['POST', '/openapi.json'],
    ['POST', '/docs'],
    ['DELETE', '/docs/static/index.html'],
  ] as const)('answers 405 with Allow for %s %s, a read-only path', async (method, url) => {
    const res = await t.app.inject({
      method: method as 'DELETE', // as above: TRACE is left out of the type
      url,
      headers: { authorization: `Bearer ${t.bearer}` },
    })
    expect(res.statusCode).toBe(405)
    expect(res.headers.allow).toBe('GET, HEAD')
    expect(errorOf(res).error).toBe(errors.METHOD_NOT_ALLOWED.code)
  })

  let nextCharsetId = 700
  it.each([
    ['application/json; charset=iso-8859-1', {}, 415],
    ['application/json; charset=utf-16', {}, 415],
    ['application/json; charset="UTF-8"', {}, 200],
    ['application/json;charset=utf8', {}, 200],
    // A parameter's quoted value is not a parameter; a charset named twice must be UTF-8 both times.
    ['application/json; foo=";charset=latin1"', {}, 200],
    ['application/json; foo="a\\"; charset=latin1"', {}, 200],
    ['application/json; charset=utf-8; charset=latin1', {}, 415],
    ['application/json; charset=latin1; charset=utf-8', {}, 415],
    // A quoted value's backslash escapes the character after it (RFC 9110 §5.6.4).
    ['application/json; charset="utf\\-8"', {}, 200],
    ['application/json', { 'content-encoding': 'gzip' }, 415],
    ['application/json', { 'content-encoding': 'br' }, 415],
    ['application/json', { 'content-encoding': 'identity' }, 200],
    // Content codings are case-insensitive (RFC 9110 §8.4.1).
    ['application/json', { 'content-encoding': 'IDENTITY' }, 200],
    ['application/json', { 'content-encoding': 'x-unknown' }, 415],
    // The field is a list: an empty one, or one naming only identity, applies no coding.
    ['application/json', { 'content-encoding': '' }, 200],
    ['application/json', { 'content-encoding': 'identity, ,identity' }, 200],
    ['application/json', { 'content-encoding': 'identity, gzip' }, 415],
  ])('reads a body sent as %s %j only when it is plain UTF-8', async (type, extra, status) => {
    const id = nextCharsetId++
    const res = await postPlant(t.app, t.bearer, `{"id": ${id}, "name": "caf\u00e9"}`, {
      'content-type': type,
      ...extra,
    })
    expect(res.statusCode).toBe(status)
    if (status === 415) expect(errorOf(res).error).toBe(errors.UNSUPPORTED_MEDIA_TYPE.code)
    expect((await get(String(id))).statusCode).toBe(status === 200 ? 200 : 404)
  })

  it('answers 415 for a body in another charset before its size or its JSON', async () => {
    const res = await postPlant(t.app, t.bearer, `{"pad":"${'x'.repeat(70_000)}"`, {
      'content-type': 'application/json; charset=latin1',
    })
    expect(res.statusCode).toBe(415)
    expect(errorOf(res).error).toBe(errors.UNSUPPORTED_MEDIA_TYPE.code)
  })

  it.each(['gzip', 'x-unknown', 'IDENTITY'])(
    'takes a Content-Encoding: %s header on a request without a body',
    async (coding) => {
      for (const url of ['/plants?limit=1', '/healthz']) {
        const res = await t.app.inject({
          method: 'GET',
          url,
          headers: { authorization: `Bearer ${t.bearer}`, 'content-encoding': coding },
        })
        expect(res.statusCode).toBe(200)
      }
    },
  )

  it('orders errors: 401 before 415, 413 and 400', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/plants',
      headers: { 'content-type': 'text/plain' },
      payload: 'x'.repeat(100_000),
    })
    expect(res.statusCode).toBe(401)
  })

  it('orders errors: 415 before 413 and 413 before 400', async () => {
    const big = `{"id": "bad", "pad": "${'x'.repeat(70_000)}"}`
    expect((await postPlant(t.app, t.bearer, big, { 'content-type': 'text/plain' })).statusCode).toBe(415)
    expect((await postPlant(t.app, t.bearer, big)).statusCode).toBe(413)
  })

  it('answers 400 for a path id that is not an int64', async () => {
    for (const id of ['9223372036854775808', 'abc', '1.5', '-0', '01']) {
      const res = await get(id)
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(errors.PATH_ID_INVALID.code)
    }
  })

  it('answers 404 for a plant that does not exist', async () => {
    const res = await get('424242')
    expect(res.statusCode).toBe(404)
    expect(errorOf(res).error).toBe(errors.PLANT_NOT_FOUND.code)
  })

  it('carries a request id, taking a sane incoming one', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    expect(res.headers['x-request-id']).toBe('abc-123')
    const odd = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'bad id\u0001' },
    })
    expect(odd.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    // A token sent as the id is not sent back in a header.
    const leaked = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': t.bearer },
    })
    expect(leaked.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    // Nor is its bare secret, nor anything long enough to hold one; a UUID-long id is kept.
    const idOf = async (id: string) =>
      (await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })).headers[
        'x-request-id'
      ]
    const secret = t.bearer.split('_').slice(2).join('_')
    expect(secret).toHaveLength(43)
    expect(await idOf(secret)).toMatch(/^[0-9a-f-]{36}$/)
    expect(await idOf('a'.repeat(37))).toMatch(/^[0-9a-f-]{36}$/)
    expect(await idOf('01J8ZQ4X7W9V2K3M5N6P7Q8R9S')).toBe('01J8ZQ4X7W9V2K3M5N6P7Q8R9S')
    expect(await idOf('6f1c2d3e-4a5b-4c7d-8e9f-0a1b2c3d4e5f')).toBe('6f1c2d3e-4a5b-4c7d-8e9f-0a1b2c3d4e5f')
  })
})

describe('body limit setting', () => {
  it('is configurable', async () => {
    const t = await makeApp(storeKinds[0] as (typeof storeKinds)[0], { bodyLimit: 100 })
    const token = await t.token()
    const res = await postPlant(t.app, token, JSON.stringify({ id: 1, name: 'x'.repeat(150) }))
    expect(res.statusCode).toBe(413)
    await t.close()
  })
})
