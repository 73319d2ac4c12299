import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { appForSuite, errorOf, makeApp, postPlant } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

describe.each(storeKinds)('Idempotency-Key on POST /plants on $name', (kind) => {
  const t = appForSuite(kind)

  const post = (body: string, key?: string, as = t.bearer) =>
    postPlant(t.app, as, body, key === undefined ? {} : { 'idempotency-key': key })
  const eventCount = async () => (await t.store.events.listSince(0, 1000)).length

  it('replays the first answer to a retry with the same key and content, creating nothing more', async () => {
    const first = await post('{"id": 1, "name": "Monstera", "tag": "aroid"}', 'key-1')
    expect(first.statusCode).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const events = await eventCount()
    // Same parsed content, different bytes: other key order, spacing, an ignored unknown field.
    const retry = await post('{"tag":"aroid","name":"Monstera","id":1,"note":"retry"}', 'key-1')
    expect(retry.statusCode).toBe(200)
    expect(retry.body).toBe(first.body)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.headers.etag).toBe(first.headers.etag)
    expect(await eventCount()).toBe(events)
  })

  it('replays the first answer even after the plant was deleted, and creates it no more', async () => {
    const first = await post('{"id": 70, "name": "gone"}', 'key-70')
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: '/plants/70',
      headers: { authorization: `Bearer ${t.bearer}` },
    })
    expect(deleted.statusCode).toBe(204)
    const retry = await post('{"id": 70, "name": "gone"}', 'key-70')
    expect([retry.statusCode, retry.body, retry.headers['idempotent-replayed']]).toEqual([
      200,
      first.body,
      'true',
    ])
    const read = await t.app.inject({
      method: 'GET',
      url: '/plants/70',
      headers: { authorization: `Bearer ${t.bearer}` },
    })
    expect(read.statusCode).toBe(404)
  })

  it('takes the key bare or as a quoted string, as the same key', async () => {
    expect((await post('{"id": 2, "name": "a"}', '"quoted key"')).statusCode).toBe(200)
    const bare = await post('{"id": 2, "name": "a"}', '"quoted key"')
    expect(bare.headers['idempotent-replayed']).toBe('true')
    expect((await post('{"id": 3, "name": "a"}', 'k3')).statusCode).toBe(200)
    expect((await post('{"id": 3, "name": "a"}', '"k3"')).headers['idempotent-replayed']).toBe('true')
  })

  it('answers 422 to the same key with different content, and writes nothing', async () => {
    await post('{"id": 10, "name": "first"}', 'key-10')
    const res = await post('{"id": 11, "name": "other"}', 'key-10')
    expect(res.statusCode).toBe(422)
    expect(errorOf(res).error).toBe(errors.IDEMPOTENCY_KEY_REUSED.code)
    const reads = await t.app.inject({
      method: 'GET',
      url: '/plants/11',
      headers: { authorization: `Bearer ${t.bearer}` },
    })
    expect(reads.statusCode).toBe(404)
  })

  it('answers 409 to a retry while the first request is still running', async () => {
    const [a, b] = await Promise.all([
      post('{"id": 20, "name": "slow"}', 'key-20'),
      post('{"id": 20, "name": "slow"}', 'key-20'),
    ])
    expect([a?.statusCode, b?.statusCode].sort()).toEqual([200, 409])
    const conflict = a?.statusCode === 409 ? a : b
    expect(errorOf(conflict as NonNullable<typeof a>).error).toBe(errors.IDEMPOTENCY_IN_PROGRESS.code)
    // A "try again" answer, as 429 and 503 are: it says when.
    expect(conflict?.headers['retry-after']).toBe('1')
    expect((await post('{"id": 20, "name": "slow"}', 'key-20')).headers['idempotent-replayed']).toBe('true')
  })

  it('scopes keys to the token', async () => {
    const other = await t.token()
    await post('{"id": 30, "name": "mine"}', 'shared-key')
    const res = await post('{"id": 31, "name": "theirs"}', 'shared-key', other)
    expect(res.statusCode).toBe(200)
    expect(res.headers['idempotent-replayed']).toBeUndefined()
  })

  it('does not record a create that failed: the id taken answers 409, and so does its retry', async () => {
    await post('{"id": 40, "name": "taken"}')
    const res = await post('{"id": 40, "name": "again"}', 'key-40')
    expect(res.statusCode).toBe(409)
    expect(errorOf(res).error).toBe(errors.PLANT_EXISTS.code)
    expect((await post('{"id": 40, "name": "again"}', 'key-40')).statusCode).toBe(409)
  })

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space inside a bare key', 'a b'],
    ['a control character', 'a\u0001'],
    ['an unterminated quote', '"abc'],
    ['an empty quoted string', '""'],
    // Not a space to HTTP: a key of its own, refused, never the key "k" that trimming it would leave.
    ['a no-break space around it', '\u00a0k\u00a0'],
  ])('answers 400 to a key that is %s', async (_what, key) => {
    const res = await post('{"id": 50, "name": "a"}', key)
    expect(res.statusCode).toBe(400)
    expect(errorOf(res).error).toBe(errors.IDEMPOTENCY_KEY_INVALID.code)
  })

  it('accepts a key of 255 characters', async () => {
    expect((await post('{"id": 51, "name": "a"}', 'k'.repeat(255))).statusCode).toBe(200)
  })

  it('validates the body before the key is looked up', async () => {
    await post('{"id": 60, "name": "a"}', 'key-60')
    const res = await post('{"id": 60}', 'key-60')
    expect(res.statusCode).toBe(400)
  })
})

describe('idempotency retention', () => {
  it('forgets a key after the configured time', async () => {
    const t = await makeApp(storeKinds[0] as (typeof storeKinds)[0], { idempotencyTtlMs: 1 })
    const token = await t.token()
    await postPlant(t.app, token, '{"id": 1, "name": "a"}', { 'idempotency-key': 'k' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await postPlant(t.app, token, '{"id": 2, "name": "b"}', { 'idempotency-key': 'k' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['idempotent-replayed']).toBeUndefined()
    await t.close()
  })
})

describe('idempotency across instances', () => {
  it('replays the record another instance committed while this one was creating the same plant', async () => {
    const t = await makeApp(storeKinds[0] as (typeof storeKinds)[0])
    const token = await t.token()
    const first = await postPlant(t.app, token, '{"id": 1, "name": "a"}', { 'idempotency-key': 'k' })
    // This instance has not seen the record yet when it looks; the create then finds the id taken.
    const find = t.store.idempotency.find.bind(t.store.idempotency)
    let calls = 0
    t.store.idempotency.find = async (...args) => (calls++ === 0 ? undefined : find(...args))
    const retry = await postPlant(t.app, token, '{"id": 1, "name": "a"}', { 'idempotency-key': 'k' })
    expect(retry.statusCode).toBe(200)
    expect(retry.body).toBe(first.body)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    await t.close()
  })
})
