import { describe, expect, it } from 'vitest'
import { appForSuite, postPlant } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

// Operations whose OpenAPI entry has no request body ignore one, as a GET does, instead of reading it
// and answering a 400, 413 or 415 the operation does not document.
describe.each(storeKinds)('operations without a request body on $name', (kind) => {
  const t = appForSuite(kind, { bodyLimit: 1024 }, ['plants:read', 'plants:write', 'webhooks:manage'])

  const bodies: Array<[string, Record<string, string>, string]> = [
    ['text/plain', { 'content-type': 'text/plain' }, 'hello'],
    ['malformed JSON', { 'content-type': 'application/json' }, '{'],
    ['a body past the body limit', { 'content-type': 'application/json' }, `"${'x'.repeat(4096)}"`],
    ['a compressed body', { 'content-type': 'application/json', 'content-encoding': 'gzip' }, 'xx'],
    [
      'an unknown content coding',
      { 'content-type': 'application/json', 'content-encoding': 'x-unknown' },
      'xx',
    ],
    ['an unknown content coding and no body', { 'content-encoding': 'x-unknown' }, ''],
    ['a body in another charset', { 'content-type': 'application/json; charset=latin1' }, '{}'],
  ]
  const send = (method: 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload: string) =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${t.bearer}`, ...headers }, payload })

  it.each(bodies)('DELETE /plants/{id} with %s deletes and answers 204', async (_what, headers, payload) => {
    const id = 700 + bodies.findIndex(([what]) => what === _what)
    expect((await postPlant(t.app, t.bearer, `{"id":${id},"name":"a"}`)).statusCode).toBe(200)
    const res = await send('DELETE', `/plants/${id}`, headers, payload)
    expect(res.statusCode).toBe(204)
    expect(await t.store.plants.get(BigInt(id))).toBeUndefined()
  })

  it.each(bodies)(
    'the webhook actions with %s do what they do without one',
    async (_what, headers, payload) => {
      const created = await t.app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: { authorization: `Bearer ${t.bearer}`, 'content-type': 'application/json' },
        payload: '{"url":"https://receiver.example/hook"}',
      })
      const { id, secret } = JSON.parse(created.body) as { id: string; secret: string }
      const rotated = await send('POST', `/webhooks/${id}/rotate-secret`, headers, payload)
      expect(rotated.statusCode).toBe(200)
      expect(JSON.parse(rotated.body).secret).not.toBe(secret)
      expect((await send('POST', `/webhooks/${id}/test`, headers, payload)).statusCode).toBe(202)
      expect((await send('DELETE', `/webhooks/${id}`, headers, payload)).statusCode).toBe(204)
      expect(await t.store.webhooks.find(id)).toBeUndefined()
    },
  )

  it('still reads and checks the body of an operation that takes one', async () => {
    const res = await send('POST', '/plants', { 'content-type': 'text/plain' }, '{"id":1,"name":"a"}')
    expect(res.statusCode).toBe(415)
  })
})
