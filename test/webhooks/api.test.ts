import type { FastifyInstance } from 'fastify'
import type pg from 'pg'
import { describe, expect, it, vi } from 'vitest'
import { errors } from '../../src/errors.js'
import { createLogger } from '../../src/log.js'
import { createPlant } from '../../src/plants/service.js'
import { OUTBOX_LOCK } from '../../src/store/postgres/outbox-lock.js'
import { Dispatcher } from '../../src/webhooks/dispatcher.js'
import { WebhookSender } from '../../src/webhooks/sender.js'
import { validateReplay } from '../../src/webhooks/validate.js'
import { appForSuite, errorOf, makeApp } from '../helpers/app.js'
import { ContractChecker } from '../helpers/contract.js'
import { admin, waitingOnLock } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { storeKinds } from '../helpers/stores.js'

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT'

/** Requests with a bearer token; a body given as a string is sent as it is, anything else as JSON. */
function callAs(app: FastifyInstance, token: string) {
  return (method: Method, url: string, body?: unknown) =>
    app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
}

describe.each(storeKinds)('webhook API on $name', (kind) => {
  const t = appForSuite(kind, {}, ['webhooks:manage'])

  const call = (method: Method, url: string, body?: unknown) => callAs(t.app, t.bearer)(method, url, body)
  const subscribe = async (body: unknown = { url: 'https://receiver.example/hook' }) => {
    const res = await call('POST', '/webhooks', body)
    expect(res.statusCode).toBe(201)
    return JSON.parse(res.body) as Record<string, unknown> & { id: string; secret: string }
  }

  it('answers 40450 to a retry whose subscription is deleted while the retry looks for the delivery', async () => {
    const { id } = await subscribe()
    const webhooks = t.store.webhooks
    const requeue = webhooks.requeueDelivery.bind(webhooks)
    // Deleting a subscription deletes its deliveries: the delivery is then missing because its
    // subscription is, which is the answer the client can act on.
    const spy = vi.spyOn(webhooks, 'requeueDelivery').mockImplementationOnce(async (...args) => {
      await webhooks.delete(id)
      return requeue(...args)
    })
    try {
      const res = await call('POST', `/webhooks/${id}/deliveries/dlv_000000000000000000000000/retry`)
      expect(res.statusCode).toBe(404)
      expect(errorOf(res).error).toBe(errors.WEBHOOK_NOT_FOUND.code)
    } finally {
      spy.mockRestore()
    }
  })

  it('answers 40450 to a test message whose subscription is deleted before it is queued', async () => {
    const { id } = await subscribe()
    const webhooks = t.store.webhooks
    const enqueue = webhooks.enqueueTest.bind(webhooks)
    // Found, then deleted (by another request or process) before the message is stored.
    const spy = vi.spyOn(webhooks, 'enqueueTest').mockImplementationOnce(async (...args) => {
      await webhooks.delete(id)
      return enqueue(...args)
    })
    try {
      const before = await t.store.webhooks.queueStats()
      const res = await call('POST', `/webhooks/${id}/test`)
      expect(res.statusCode).toBe(404)
      expect(errorOf(res).error).toBe(errors.WEBHOOK_NOT_FOUND.code)
      expect(await t.store.webhooks.queueStats()).toEqual(before)
    } finally {
      spy.mockRestore()
    }
  })

  it('answers 40450 to a replay whose subscription is deleted before the events are queued', async () => {
    const { id } = await subscribe()
    const webhooks = t.store.webhooks
    const replay = webhooks.replay.bind(webhooks)
    const spy = vi.spyOn(webhooks, 'replay').mockImplementationOnce(async (...args) => {
      await webhooks.delete(id)
      return replay(...args)
    })
    try {
      const res = await call('POST', `/webhooks/${id}/replay`, { since: '2000-01-01T00:00:00Z' })
      expect(res.statusCode).toBe(404)
      expect(errorOf(res).error).toBe(errors.WEBHOOK_NOT_FOUND.code)
    } finally {
      spy.mockRestore()
    }
  })

  it('creates a subscription and shows its secret only in that answer', async () => {
    const res = await call('POST', '/webhooks', {
      url: 'https://receiver.example/hook',
      events: ['plant.created'],
      description: 'CRM sync',
      extra: 'ignored',
    })
    expect(res.statusCode).toBe(201)
    const created = JSON.parse(res.body)
    expect(created).toMatchObject({
      url: 'https://receiver.example/hook',
      events: ['plant.created'],
      description: 'CRM sync',
      disabled: false,
      disabledReason: null,
    })
    expect(created.id).toMatch(/^wh_[A-Za-z0-9_-]{22}$/)
    expect(res.headers.location).toBe(`/webhooks/${created.id}`)
    expect(created.secret).toMatch(/^whsec_/)
    const key = Buffer.from(created.secret.slice(6), 'base64')
    expect(key.length).toBeGreaterThanOrEqual(24)
    expect(key.length).toBeLessThanOrEqual(64)
    expect(created).not.toHaveProperty('extra')
    const read = await call('GET', `/webhooks/${created.id}`)
    expect(read.statusCode).toBe(200)
    expect(JSON.parse(read.body)).not.toHaveProperty('secret')
    expect(read.body).not.toContain(created.secret)
    const list = JSON.parse((await call('GET', '/webhooks')).body)
    expect(list.data.map((w: { id: string }) => w.id)).toContain(created.id)
    expect(JSON.stringify(list)).not.toContain(created.secret)
  })

  it('takes description null on creation as no description, as PATCH does, and says so', async () => {
    const created = await subscribe({ url: 'https://receiver.example/hook', description: null })
    expect(created.description).toBeNull()
    const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body)
    for (const shape of ['NewWebhook', 'WebhookUpdate']) {
      const accepted = document.components.schemas[shape].properties.description.anyOf ?? []
      expect(accepted).toContainEqual({ type: 'null' })
    }
  })

  it('subscribes to every event type when events is omitted', async () => {
    const created = await subscribe()
    expect(created.events).toEqual(['plant.created', 'plant.updated', 'plant.deleted'])
  })

  it.each([
    ['no url', {}, errors.WEBHOOK_URL_INVALID],
    ['a relative url', { url: '/hook' }, errors.WEBHOOK_URL_INVALID],
    ['an ftp url', { url: 'ftp://receiver.example/' }, errors.WEBHOOK_URL_INVALID],
    ['an http url without a host', { url: 'https://' }, errors.WEBHOOK_URL_INVALID],
    ['an http url whose host does not parse', { url: 'https://[::1/hook' }, errors.WEBHOOK_URL_INVALID],
    ['credentials in the url', { url: 'https://u:p@receiver.example/' }, errors.WEBHOOK_URL_INVALID],
    ['a number for url', { url: 42 }, errors.WEBHOOK_URL_INVALID],
    ['unknown events', { url: 'https://r.example/', events: ['plant.eaten'] }, errors.WEBHOOK_EVENTS_INVALID],
    ['empty events', { url: 'https://r.example/', events: [] }, errors.WEBHOOK_EVENTS_INVALID],
    [
      'events not a list',
      { url: 'https://r.example/', events: 'plant.created' },
      errors.WEBHOOK_EVENTS_INVALID,
    ],
    [
      'a long description',
      { url: 'https://r.example/', description: 'x'.repeat(501) },
      errors.WEBHOOK_DESCRIPTION_INVALID,
    ],
    [
      'a control character in description',
      { url: 'https://r.example/', description: 'a\nb' },
      errors.WEBHOOK_DESCRIPTION_INVALID,
    ],
    [
      'a lone surrogate in description',
      { url: 'https://r.example/', description: 'a\ud800b' },
      errors.WEBHOOK_DESCRIPTION_INVALID,
    ],
    [
      'a lone low surrogate in description',
      { url: 'https://r.example/', description: '\udc00' },
      errors.WEBHOOK_DESCRIPTION_INVALID,
    ],
    // The URL parser would store U+FFFD (percent-encoded) for a lone surrogate and silently drop a
    // newline: a URL that is not the one sent.
    ['a lone surrogate in the url', { url: 'https://r.example/a\ud800b' }, errors.WEBHOOK_URL_INVALID],
    ['a control character in the url', { url: 'https://r.example/a\nb' }, errors.WEBHOOK_URL_INVALID],
    ['an array body', [], errors.BODY_NOT_OBJECT],
  ])('refuses %s with 400', async (_name, body, entry) => {
    const res = await call('POST', '/webhooks', body)
    expect(res.statusCode).toBe(400)
    expect(errorOf(res).error).toBe(entry.code)
  })

  // The limit holds for the URL as stored and sent: the parser percent-encodes what it must (an é
  // becomes %C3%A9), so 1,900 of them would have been stored as 11,000 characters, a URL that a
  // GET shows and a PATCH with that very value refuses.
  it.each([
    ['longer than 2000 characters', `https://r.example/${'a'.repeat(1983)}`],
    ['longer than 2000 characters once percent-encoded', `https://r.example/${'é'.repeat(1900)}`],
  ])('refuses a url %s with 400, saying so', async (_name, url) => {
    const res = await call('POST', '/webhooks', { url })
    expect(res.statusCode).toBe(400)
    expect(errorOf(res)).toEqual({
      error: errors.WEBHOOK_URL_INVALID.code,
      message: 'The field url must be at most 2000 characters.',
    })
  })

  // Node connects to the scheme's default port for port 0: a subscription to :0 would be sent to :80.
  it.each(['https://r.example:0/hook', 'http://r.example:00/hook'])(
    'refuses port 0 in %s with 400, saying so',
    async (url) => {
      const res = await call('POST', '/webhooks', { url })
      expect(res.statusCode).toBe(400)
      expect(errorOf(res)).toEqual({
        error: errors.WEBHOOK_URL_INVALID.code,
        message: 'The field url must name a port from 1 to 65535, or none.',
      })
    },
  )

  // HTTP never sends a fragment: the subscription would show a URL its receiver is never called with.
  it.each(['https://r.example/hook#frag', 'https://r.example/hook#', 'https://r.example/#a#b'])(
    'refuses a fragment in %s with 400, saying so, on subscribing and on changing the url',
    async (url) => {
      const fragment = {
        error: errors.WEBHOOK_URL_INVALID.code,
        message: 'The field url must not have a fragment (#…): it is never sent.',
      }
      const created = await call('POST', '/webhooks', { url })
      expect(created.statusCode).toBe(400)
      expect(errorOf(created)).toEqual(fragment)
      const hook = await subscribe()
      const changed = await call('PATCH', `/webhooks/${hook.id}`, { url })
      expect(changed.statusCode).toBe(400)
      expect(errorOf(changed)).toEqual(fragment)
      expect((await call('GET', `/webhooks/${hook.id}`)).json().url).toBe(hook.url)
    },
  )

  // Generated clients and validating proxies hold a body to the published schema: a URL the service
  // takes, and stores as the URL parser writes it, must match it. RFC 3986 (format: uri) has no
  // place for an IDN host, a raw é or a space, all of which the parser encodes.
  it.each([
    'https://bücher.example/hook',
    'https://r.example/plantes/é',
    'https://r.example/a b',
    'https://r.example/{hook}',
  ])('publishes a url schema that takes %s, as the service does', async (url) => {
    const document = (await call('GET', '/openapi.json')).json()
    const checker = new ContractChecker(document)
    const created = await subscribe({ url })
    expect(created.url).not.toBe(url)
    expect(checker.matches('#/components/schemas/NewWebhook', { url })).toBe(true)
    expect(checker.matches('#/components/schemas/WebhookUpdate', { url })).toBe(true)
  })

  it('takes a url of 2000 characters as stored, and the same url back in a PATCH', async () => {
    const url = `https://r.example/${'%C3%A9'.repeat(330)}${'a'.repeat(2)}`
    expect(url).toHaveLength(2000)
    const hook = await subscribe({ url: `https://r.example/${'é'.repeat(330)}aa` })
    expect(hook.url).toBe(url)
    const res = await call('PATCH', `/webhooks/${hook.id}`, { url: hook.url })
    expect(res.statusCode).toBe(200)
  })

  it.each([
    'http://127.0.0.1/',
    'http://localhost:8080/',
    'http://api.localhost/',
    'http://LOCALHOST/',
    'http://localhost./',
    'http://localhost...:8080/',
    'http://Api.LocalHost../',
    'http://loc%61lhost/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.0.0.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
  ])('refuses the private address %s with 400 by default', async (url) => {
    const res = await call('POST', '/webhooks', { url })
    expect(res.statusCode).toBe(400)
    expect(errorOf(res).error).toBe(errors.WEBHOOK_URL_FORBIDDEN.code)
  })

  it.each([
    'https://localhost.example.com/',
    'https://mylocalhost/',
    'https://localhost-dev.example/hook',
    'https://93.184.216.34/',
  ])('takes the public host of %s', async (url) => {
    const res = await call('POST', '/webhooks', { url })
    expect(res.statusCode).toBe(201)
  })

  it('takes application/merge-patch+json only for PATCH: a create or a replay is 415', async () => {
    const { id } = await subscribe()
    const send = (method: 'POST' | 'PATCH', url: string, body: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${t.bearer}`, 'content-type': 'application/merge-patch+json' },
        payload: JSON.stringify(body),
      })
    for (const [url, body] of [
      ['/webhooks', { url: 'https://receiver.example/hook' }],
      [`/webhooks/${id}/replay`, { since: new Date(Date.now() - 1000).toISOString() }],
    ] as const) {
      const res = await send('POST', url, body)
      expect(res.statusCode).toBe(415)
      expect(errorOf(res).error).toBe(errors.UNSUPPORTED_MEDIA_TYPE.code)
    }
    expect((await send('PATCH', `/webhooks/${id}`, { description: 'merged' })).statusCode).toBe(200)
    const text = await t.app.inject({
      method: 'PATCH',
      url: `/webhooks/${id}`,
      headers: { authorization: `Bearer ${t.bearer}`, 'content-type': 'text/plain' },
      payload: 'description=x',
    })
    expect(text.statusCode).toBe(415)
    expect(text.headers['accept-patch']).toBe('application/merge-patch+json, application/json')
  })

  it('needs the webhooks:manage scope', async () => {
    const plantsOnly = await t.token(['plants:read', 'plants:write'])
    const res = await t.app.inject({
      method: 'GET',
      url: '/webhooks',
      headers: { authorization: `Bearer ${plantsOnly}` },
    })
    expect(res.statusCode).toBe(403)
    expect(errorOf(res).error).toBe(errors.SCOPE_MISSING.code)
    expect(res.headers['www-authenticate']).toContain('scope="webhooks:manage"')
    const anonymous = await t.app.inject({ method: 'POST', url: '/webhooks' })
    expect(anonymous.statusCode).toBe(401)
  })

  it('answers 404 for unknown and malformed subscription ids, and 405 for wrong methods', async () => {
    for (const id of ['wh_AAAAAAAAAAAAAAAAAAAAAA', 'nope', 'wh_short']) {
      const res = await call('GET', `/webhooks/${id}`)
      expect(res.statusCode).toBe(404)
      expect(errorOf(res).error).toBe(errors.WEBHOOK_NOT_FOUND.code)
    }
    // Every operation on one subscription names a missing one the same way.
    const missing = '/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA'
    for (const [method, url, body] of [
      ['DELETE', missing],
      ['PATCH', missing, { disabled: true }],
      ['POST', `${missing}/rotate-secret`],
      ['POST', `${missing}/test`],
      ['GET', `${missing}/deliveries`],
      ['POST', `${missing}/replay`, { since: '2020-01-01T00:00:00Z' }],
      ['POST', `${missing}/recover`, { since: '2020-01-01T00:00:00Z' }],
      ['GET', `${missing}/deliveries/dlv_000000000000000000000000/attempts`],
    ] as Array<[Method, string, unknown?]>) {
      const res = await call(method, url, body)
      expect([method, url, res.statusCode, errorOf(res).error]).toEqual([
        method,
        url,
        404,
        errors.WEBHOOK_NOT_FOUND.code,
      ])
    }
    // A missing subscription is named first, whatever the delivery id after it looks like.
    for (const id of ['wh_AAAAAAAAAAAAAAAAAAAAAA', 'nope']) {
      for (const deliveryId of ['dlv_000000000000000000000000', 'bogus']) {
        const res = await call('POST', `/webhooks/${id}/deliveries/${deliveryId}/retry`)
        expect([id, deliveryId, res.statusCode, errorOf(res).error]).toEqual([
          id,
          deliveryId,
          404,
          errors.WEBHOOK_NOT_FOUND.code,
        ])
      }
    }
    const put = await call('PUT', '/webhooks')
    expect(put.statusCode).toBe(405)
    expect(put.headers.allow).toBe('GET, HEAD, POST')
  })

  it('gives a changed url a fresh count towards automatic disabling, and keeps the count otherwise', async () => {
    const { id, url } = await subscribe()
    const since = new Date('2026-01-01T00:00:00.000Z')
    await t.store.webhooks.update(id, { failingSince: since, updatedAt: new Date() })
    const failingSince = async (body: unknown) => {
      const res = await call('PATCH', `/webhooks/${id}`, body)
      expect(res.statusCode).toBe(200)
      return (JSON.parse(res.body) as { failingSince: string | null }).failingSince
    }
    expect(await failingSince({ description: 'same receiver' })).toBe(since.toISOString())
    expect(await failingSince({ url })).toBe(since.toISOString())
    expect(await failingSince({ url: 'https://fixed.example/hook' })).toBeNull()
  })

  it('updates url, events and description, disables and re-enables', async () => {
    const { id } = await subscribe()
    const res = await call('PATCH', `/webhooks/${id}`, {
      url: 'https://other.example/in',
      events: ['plant.deleted'],
      description: 'x',
    })
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({
      url: 'https://other.example/in',
      events: ['plant.deleted'],
      description: 'x',
    })
    const off = JSON.parse((await call('PATCH', `/webhooks/${id}`, { disabled: true })).body)
    expect(off).toMatchObject({ disabled: true, disabledReason: 'manual' })
    const on = JSON.parse(
      (await call('PATCH', `/webhooks/${id}`, { disabled: false, description: null })).body,
    )
    expect(on).toMatchObject({ disabled: false, disabledReason: null, disabledAt: null, description: null })
    for (const [body, entry] of [
      [{}, errors.WEBHOOK_UPDATE_EMPTY],
      [{ disabled: 'yes' }, errors.WEBHOOK_DISABLED_INVALID],
      [{ url: 'http://10.1.1.1/' }, errors.WEBHOOK_URL_FORBIDDEN],
      [{ description: 'a\ud800b' }, errors.WEBHOOK_DESCRIPTION_INVALID],
      [{ url: 'https://other.example/\udfff' }, errors.WEBHOOK_URL_INVALID],
    ] as const) {
      const bad = await call('PATCH', `/webhooks/${id}`, body)
      expect(bad.statusCode).toBe(400)
      expect(errorOf(bad).error).toBe(entry.code)
    }
    expect((await call('PATCH', '/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA', { disabled: true })).statusCode).toBe(
      404,
    )
  })

  it('deletes a subscription', async () => {
    const { id } = await subscribe()
    const res = await call('DELETE', `/webhooks/${id}`)
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    expect((await call('GET', `/webhooks/${id}`)).statusCode).toBe(404)
    expect((await call('DELETE', `/webhooks/${id}`)).statusCode).toBe(404)
  })

  it('rotates the secret, keeping the old one signing for 24 hours', async () => {
    const { id, secret } = await subscribe()
    const res = await call('POST', `/webhooks/${id}/rotate-secret`)
    expect(res.statusCode).toBe(200)
    const rotated = JSON.parse(res.body)
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(secret)
    const graceMs = Date.parse(rotated.previousSecretExpiresAt) - Date.now()
    expect(graceMs).toBeGreaterThan(23 * 3600_000)
    expect(graceMs).toBeLessThanOrEqual(24 * 3600_000)
    const stored = await t.store.webhooks.find(id)
    expect(stored?.previousSecret).toBe(secret)
  })

  it('keeps a secret it answered signing when two rotations cross: the later one replaces it', async () => {
    const { id, secret } = await subscribe()
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => call('POST', `/webhooks/${id}/rotate-secret`)),
    )
    const secrets = answers.map((res) => JSON.parse(res.body).secret as string)
    const stored = await t.store.webhooks.find(id)
    expect(secrets).toContain(stored?.secret)
    // Each rotation replaces the secret the one before it answered, never the original again.
    expect(secrets).toContain(stored?.previousSecret)
    expect(stored?.previousSecret).not.toBe(secret)
  })

  it('keeps one previous secret: a second rotation within the day replaces the first one', async () => {
    const { id, secret } = await subscribe()
    const first = JSON.parse((await call('POST', `/webhooks/${id}/rotate-secret`)).body)
    const second = JSON.parse((await call('POST', `/webhooks/${id}/rotate-secret`)).body)
    const stored = await t.store.webhooks.find(id)
    expect(stored?.secret).toBe(second.secret)
    expect(stored?.previousSecret).toBe(first.secret)
    expect([stored?.secret, stored?.previousSecret]).not.toContain(secret)
    // The document says so, rather than promising the replaced secret its 24 hours.
    const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body)
    const operation = document.paths['/webhooks/{id}/rotate-secret'].post
    expect(`${operation.summary} ${operation.description ?? ''}`).toMatch(
      /a later rotation replaces it|replaced by a later rotation/i,
    )
  })

  it('queues a test message, lists deliveries, retries one and replays since a time', async () => {
    const { id } = await subscribe()
    const test = await call('POST', `/webhooks/${id}/test`)
    expect(test.statusCode).toBe(202)
    const delivery = JSON.parse(test.body)
    expect(delivery).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempts: 0 })

    const since = new Date(Date.now() - 1000).toISOString()
    await createPlant(t.store.plants, { id: 77n, name: 'replayed' })
    await t.store.webhooks.fanOut(100, new Date())
    const list = await call('GET', `/webhooks/${id}/deliveries?limit=10`)
    expect(list.statusCode).toBe(200)
    const rows = JSON.parse(list.body).data
    expect(rows.map((r: { eventType: string }) => r.eventType).sort()).toEqual([
      'plant.created',
      'webhook.test',
    ])
    expect(rows[0]).toHaveProperty('nextAttemptAt')
    const pending = JSON.parse((await call('GET', `/webhooks/${id}/deliveries?status=failed`)).body).data
    expect(pending).toEqual([])
    // Said in words, as the plant listing's are, not in the schema validator's.
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries?limit=0`))).toEqual({
      error: errors.QUERY_INVALID.code,
      message: 'The query parameter limit must be an integer from 1 to 500.',
    })
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries?status=lost`))).toEqual({
      error: errors.QUERY_INVALID.code,
      message: 'The query parameter status must be one of pending, succeeded, failed.',
    })
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries?after=x`)).message).toBe(
      'The query parameter after must be the cursor given in the `Link` header of the previous page.',
    )
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries?status=%FF`))).toEqual({
      error: errors.QUERY_INVALID.code,
      message: 'The query string holds a percent-escape that does not decode.',
    })
    expect(errorOf(await call('GET', `/webhooks/${id}/deliveries?status=failed&status=pending`))).toEqual({
      error: errors.QUERY_INVALID.code,
      message: 'The query parameter status must be given at most once.',
    })

    const retry = await call('POST', `/webhooks/${id}/deliveries/${delivery.id}/retry`)
    expect(retry.statusCode).toBe(202)
    expect(JSON.parse(retry.body)).toMatchObject({ id: delivery.id, status: 'pending' })
    const missing = await call('POST', `/webhooks/${id}/deliveries/dlv_000000000000000000000000/retry`)
    expect(missing.statusCode).toBe(404)
    expect(errorOf(missing).error).toBe(errors.DELIVERY_NOT_FOUND.code)
    expect(errorOf(await call('POST', `/webhooks/${id}/deliveries/bogus/retry`)).error).toBe(
      errors.DELIVERY_NOT_FOUND.code,
    )

    const replay = await call('POST', `/webhooks/${id}/replay`, { since })
    expect(replay.statusCode).toBe(202)
    expect(JSON.parse(replay.body)).toEqual({ queued: 1 })
    for (const since of [
      'yesterday',
      '2999-01-01T00:00:00Z',
      5,
      // Times that do not exist, which a date parser would roll over into the next day or month.
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2025-04-31T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-00-10T00:00:00Z',
      '2025-11-20T24:00:00Z',
      '2025-11-20T00:60:00Z',
      '2025-11-20T00:00:61Z',
      '2025-11-20T00:00:00+24:00',
      '2025-11-20T00:00:00+01:60',
    ]) {
      const bad = await call('POST', `/webhooks/${id}/replay`, { since })
      expect(bad.statusCode).toBe(400)
      expect(errorOf(bad).error).toBe(errors.REPLAY_SINCE_INVALID.code)
    }
    // A leap second is valid RFC 3339 (at any minute, as its grammar has it), and so is February 29
    // of a leap year.
    // RFC 3339 bounds no fraction's digits: twelve are as valid as three.
    for (const since of [
      '2016-12-31T23:59:60Z',
      '2025-11-20T00:00:60.5+01:00',
      '2024-02-29T00:00:00z',
      '2025-11-20T00:00:00.123456789012Z',
    ]) {
      expect((await call('POST', `/webhooks/${id}/replay`, { since })).statusCode).toBe(202)
    }
  })

  it.skipIf(kind.name !== 'postgres')(
    'replays beside a batch of outcomes that takes the same deliveries in another order',
    async () => {
      const { id } = await subscribe({ url: 'https://receiver.example/hook', events: ['plant.created'] })
      // Other tests' events are older: a replay since now queues these two.
      const since = new Date().toISOString()
      await createPlant(t.store.plants, { id: 901n, name: 'first' })
      await createPlant(t.store.plants, { id: 902n, name: 'second' })
      await t.store.webhooks.fanOut(100, new Date())
      await admin(t.url, async (outcomes) => {
        const rows = await outcomes.query<{ id: string }>(
          `SELECT d.id FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
           WHERE d.webhook_id = $1 ORDER BY e.seq`,
          [id],
        )
        const [first, second] = rows.rows.map((r) => r.id)
        // A dispatcher recording outcomes in the order the attempts ended: the later event's first.
        await outcomes.query('BEGIN')
        await outcomes.query("UPDATE webhook_deliveries SET last_error = 'late' WHERE id = $1", [second])
        const replay = call('POST', `/webhooks/${id}/replay`, { since })
        // The replay has requeued the first event's delivery and waits for the second's.
        await waitingOnLock(t.url, 'INSERT INTO webhook_deliveries%')
        // Each now waits for the other: PostgreSQL aborts the replay's transaction.
        await outcomes.query("UPDATE webhook_deliveries SET last_error = 'late' WHERE id = $1", [first])
        await outcomes.query('COMMIT')
        const res = await replay
        expect(res.statusCode).toBe(202)
        expect(JSON.parse(res.body)).toEqual({ queued: 2 })
      })
    },
  )

  it('lists deliveries a page at a time, each page linking to the next until the last', async () => {
    const { id } = await subscribe()
    // Plants created in one go share their time: the pages must still split between them exactly.
    for (let i = 1; i <= 7; i++) await createPlant(t.store.plants, { id: BigInt(9100 + i), name: `p${i}` })
    await t.store.webhooks.fanOut(100, new Date())
    const all = JSON.parse((await call('GET', `/webhooks/${id}/deliveries`)).body).data as Array<{
      id: string
    }>
    expect(all).toHaveLength(7)

    const walked: string[] = []
    const links: string[] = []
    let next: string | undefined = `/webhooks/${id}/deliveries?limit=3&status=pending`
    while (next !== undefined) {
      const page = await call('GET', next)
      expect(page.statusCode).toBe(200)
      walked.push(...JSON.parse(page.body).data.map((d: { id: string }) => d.id))
      const link = page.headers.link as string | undefined
      if (link !== undefined) links.push(link)
      next = link?.match(/^<([^>]+)>; rel="next"$/)?.[1]
    }
    expect(walked).toEqual(all.map((d) => d.id))
    expect(links).toHaveLength(2)
    for (const link of links) expect(link).toContain('limit=3&status=pending&after=')
    // A full last page has no link either: nothing follows it.
    expect((await call('GET', `/webhooks/${id}/deliveries?limit=7`)).headers.link).toBeUndefined()

    for (const after of ['abc', '1.', '.1', '01.1', '1.2.3', '1.99999999999999999']) {
      const res = await call('GET', `/webhooks/${id}/deliveries?after=${after}`)
      expect(res.statusCode, after).toBe(400)
      expect(errorOf(res).error).toBe(errors.QUERY_INVALID.code)
    }
  })

  it.skipIf(kind.name !== 'postgres')(
    'numbers a test message in commit order, and starts a subscription made meanwhile after every event committed before it',
    async () => {
      const tested = await subscribe()
      const waitingOnOutbox = async (client: pg.Client) =>
        (
          await client.query(
            `SELECT 1 FROM pg_locks
              WHERE locktype = 'advisory' AND NOT granted AND classid = $1 AND objid = $2 AND objsubid = 2`,
            [...OUTBOX_LOCK],
          )
        ).rowCount
      const late = await admin(t.url, async (client) => {
        await client.query('BEGIN')
        // A create in flight: its event holds the outbox lock, and the next seq, until it commits.
        await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...OUTBOX_LOCK])
        await client.query(
          `INSERT INTO events (id, type, payload, created_at) VALUES ('msg_in_flight', 'plant.created', '{}', now())`,
        )
        // The test message and the subscription both wait for that lock (PostgreSQL lists their
        // requests as not granted), so neither takes a number or a starting point meanwhile.
        const testing = call('POST', `/webhooks/${tested.id}/test`)
        await vi.waitFor(async () => expect(await waitingOnOutbox(client)).toBe(1), {
          timeout: 10_000,
          interval: 20,
        })
        const subscribing = subscribe()
        await vi.waitFor(async () => expect(await waitingOnOutbox(client)).toBe(2), {
          timeout: 10_000,
          interval: 20,
        })
        await client.query('COMMIT')
        expect((await testing).statusCode).toBe(202)
        return subscribing
      })
      // The event in flight committed before the subscription was made: it receives only the create
      // after it. The dispatcher fans out the event written past the store.
      await createPlant(t.store.plants, { id: 31n, name: 'after' })
      await t.store.webhooks.fanOut(100, new Date())
      const listed = JSON.parse((await call('GET', `/webhooks/${late.id}/deliveries`)).body)
      expect(listed.data).toHaveLength(1)
      const event = (await t.store.events.listSince(0, 10_000)).find(
        (e) => JSON.parse(e.payload).data?.id === 31,
      )
      expect(listed.data[0].eventId).toBe(event?.id)
      const tests = JSON.parse((await call('GET', `/webhooks/${tested.id}/deliveries`)).body)
      expect(tests.data.map((d: { eventId: string }) => d.eventId)).toContain('msg_in_flight')
    },
  )

  it('takes a leap second in since as the end of its minute', () => {
    expect(validateReplay({ since: '2016-12-31T23:59:60Z' }).since.toISOString()).toBe(
      '2017-01-01T00:00:00.000Z',
    )
    expect(validateReplay({ since: '2025-06-30T23:59:60.999-02:30' }).since.toISOString()).toBe(
      '2025-07-01T02:30:00.000Z',
    )
    expect(validateReplay({ since: '0001-01-01T00:00:00.1234Z' }).since.toISOString()).toBe(
      '0001-01-01T00:00:00.123Z',
    )
    expect(validateReplay({ since: '2025-11-20T00:00:00.9999999999Z' }).since.toISOString()).toBe(
      '2025-11-20T00:00:00.999Z',
    )
  })
})

describe('webhook URLs with private addresses allowed', () => {
  it('accepts a loopback receiver for local development', async () => {
    const t = await makeApp(storeKinds[0] as never, { allowPrivateWebhookUrls: true })
    try {
      const token = await t.token(['webhooks:manage'])
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{"url": "http://127.0.0.1:9/hook"}',
      })
      expect(res.statusCode).toBe(201)
    } finally {
      await t.close()
    }
  })
})

describe.each(storeKinds)('retry and replay during an attempt on $name', (kind) => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

  it('never starts a second attempt beside one in flight; the delivery goes again once it ends', async () => {
    const t = await makeApp(kind, { allowPrivateWebhookUrls: true })
    const receiver = await startReceiver()
    const dispatcher = new Dispatcher({
      store: t.store.webhooks,
      sender: new WebhookSender({ timeoutMs: 10_000, allowPrivateUrls: true }),
      logger: createLogger('silent'),
      retrySchedule: [10],
      timeoutMs: 10_000,
      disableAfterMs: 86_400_000,
      pollIntervalMs: 10,
    })
    try {
      const token = await t.token(['webhooks:manage'])
      const call = callAs(t.app, token)
      const created = await call('POST', '/webhooks', { url: receiver.url, events: ['plant.created'] })
      const { id } = JSON.parse(created.body) as { id: string }
      const since = new Date(Date.now() - 1000).toISOString()
      receiver.respondWith('hang')
      await createPlant(t.store.plants, { id: 1n, name: 'in flight' })
      dispatcher.start()
      await receiver.waitFor(1)
      const delivery = () => call('GET', `/webhooks/${id}/deliveries`).then((r) => JSON.parse(r.body).data[0])
      const deliveryId = (await delivery()).id as string

      // Each way of asking for the delivery again, while an attempt of it still waits for an answer
      // (the receiver keeps every request waiting until released).
      const asks = [
        () => call('POST', `/webhooks/${id}/deliveries/${deliveryId}/retry`),
        () => call('POST', `/webhooks/${id}/replay`, { since }),
      ]
      for (const ask of asks) {
        const sent = receiver.received.length
        expect((await ask()).statusCode).toBe(202)
        expect(await delivery()).toMatchObject({ status: 'pending', attempts: 0 })
        await sleep(300)
        expect(receiver.received).toHaveLength(sent)
        // The attempt in flight ends, and the one asked for follows it, with the same webhook-id.
        receiver.release(200)
        const [first, next] = (await receiver.waitFor(sent + 1)).slice(sent - 1)
        expect(next?.headers['webhook-id']).toBe(first?.headers['webhook-id'])
        await sleep(300)
        expect(receiver.received).toHaveLength(sent + 1)
      }
      receiver.respondWith(200)
      receiver.release(200)
      // The answer is recorded once the dispatcher's batch window has passed: a moment, which a busy
      // machine can stretch; the bound is the attempt timeout the dispatcher runs with.
      await vi.waitFor(
        async () =>
          expect(await delivery()).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 200 }),
        { timeout: 10_000, interval: 20 },
      )
    } finally {
      await dispatcher.stop(0)
      receiver.release(200)
      await receiver.close()
      await t.close()
    }
  })
})
