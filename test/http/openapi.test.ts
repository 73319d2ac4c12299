import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { testEvent } from '../../src/webhooks/model.js'
import { makeApp, type TestApp } from '../helpers/app.js'
import { ContractChecker } from '../helpers/contract.js'
import { storeKinds } from '../helpers/stores.js'

interface Document {
  openapi: string
  info: { version: string; description: string }
  paths: Record<string, Record<string, Record<string, unknown>>>
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, unknown> }
  'x-error-codes': Array<{ code: number; status: number; name: string; message: string }>
}

/** The value at a path of keys in parsed JSON; undefined when any step is missing. */
function pick(value: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value)
}

describe('the published contract', () => {
  let t: TestApp
  let doc: Document
  beforeAll(async () => {
    t = await makeApp(storeKinds[0] as (typeof storeKinds)[0])
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    doc = JSON.parse(res.body) as Document
  })
  afterAll(() => t.close())

  it('is a valid OpenAPI 3.1 document, served without a token', async () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(doc.info.version).toBe('1.0.0')
    const result = await new Validator().validate(
      structuredClone(doc) as unknown as Parameters<Validator['validate']>[0],
    )
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('lists every operation of the plant resource, the change feed, the webhook subscriptions, the tokens and the caller', () => {
    const operations = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    )
    expect(operations.sort()).toEqual(
      [
        'createPlant',
        'createPlants',
        'deletePlant',
        'deletePlants',
        'getPlant',
        'getPlantHistory',
        'listChanges',
        'health',
        'listPlants',
        'metrics',
        'ready',
        'replacePlant',
        'updatePlant',
        'createWebhook',
        'listWebhooks',
        'getWebhook',
        'updateWebhook',
        'deleteWebhook',
        'rotateWebhookSecret',
        'testWebhook',
        'listWebhookDeliveries',
        'retryWebhookDelivery',
        'replayWebhook',
        'listWebhookDeliveryAttempts',
        'recoverWebhook',
        'createToken',
        'listTokens',
        'getToken',
        'revokeToken',
        'rollToken',
        'streamChanges',
        'createStreamTicket',
        'getCaller',
      ].sort(),
    )
  })

  it('declares the plant events subscribers receive, as webhooks', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { requestBody: unknown } }> })
      .webhooks
    expect(Object.keys(webhooks).sort()).toEqual([
      'plant.created',
      'plant.deleted',
      'plant.updated',
      'webhook.test',
    ])
    expect(JSON.stringify(webhooks['plant.created']?.post.requestBody)).toContain(
      '#/components/schemas/PlantEvent',
    )
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['PlantEvent', 'Webhook', 'Delivery']),
    )
  })

  it('asks no bearer token of webhook receivers: the messages are signed, not authorized', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { security?: unknown } }> })
      .webhooks
    for (const [type, item] of Object.entries(webhooks)) expect(item.post.security, type).toEqual([])
  })

  it('declares the test message POST /webhooks/{id}/test sends, in the shape it is sent in', () => {
    const webhooks = (doc as unknown as { webhooks: Record<string, unknown> }).webhooks
    const schema = pick(
      webhooks,
      'webhook.test',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
    )
    expect(schema).toEqual({ $ref: '#/components/schemas/TestEvent' })
    const checker = new ContractChecker(doc as unknown as ConstructorParameters<typeof ContractChecker>[0])
    const sent = JSON.parse(testEvent(`wh_${'a'.repeat(22)}`).payload) as unknown
    expect(checker.matches('#/components/schemas/TestEvent', sent)).toBe(true)
    expect(checker.matches('#/components/schemas/TestEvent', { ...(sent as object), data: {} })).toBe(false)
  })

  it('names the shapes NewPlant, Plant, StoredPlant and Error as components', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['NewPlant', 'Plant', 'StoredPlant', 'Error', 'PlantPatch']),
    )
    expect(doc.components.schemas.Error?.required).toEqual(['error', 'message'])
  })

  it('keeps create wire-compatible with the spec: NewPlant in, a Plant-compatible 200, Error on 400', () => {
    const create = pick(doc, 'paths', '/plants', 'post')
    expect(pick(create, 'requestBody', 'required')).toBe(true)
    expect(pick(create, 'requestBody', 'content', 'application/json', 'schema')).toEqual({
      $ref: '#/components/schemas/NewPlant',
    })
    expect(pick(create, 'responses', '200', 'content', 'application/json', 'schema')).toEqual({
      $ref: '#/components/schemas/StoredPlant',
    })
    expect(pick(create, 'responses', '400', 'content', 'application/json', 'schema')).toEqual({
      $ref: '#/components/schemas/Error',
    })
    expect(pick(doc, 'components', 'schemas', 'StoredPlant', 'required')).toEqual(
      expect.arrayContaining(['name']),
    )
    expect(Object.keys(pick(doc, 'components', 'schemas', 'StoredPlant', 'properties') as object)).toEqual(
      expect.arrayContaining(['name', 'tag']),
    )
    expect(pick(doc, 'components', 'schemas', 'NewPlant', 'required')).toEqual(['id', 'name'])
    expect(pick(doc, 'components', 'schemas', 'NewPlant', 'properties', 'id')).toMatchObject({
      type: 'integer',
      format: 'int64',
    })
  })

  it('declares the id a PUT or PATCH body may repeat, optional and as the create body declares it', () => {
    const schema = (name: string) => pick(doc, 'components', 'schemas', name)
    for (const name of ['Plant', 'PlantPatch']) {
      expect(pick(schema(name), 'properties', 'id'), name).toEqual(
        pick(schema('NewPlant'), 'properties', 'id'),
      )
      expect((pick(schema(name), 'required') as string[] | undefined) ?? [], name).not.toContain('id')
    }
  })

  it('refuses in the schema of each text field the characters the service refuses there', async () => {
    const token = await t.token(['plants:write', 'webhooks:manage'])
    const checker = new ContractChecker(doc as unknown as ConstructorParameters<typeof ContractChecker>[0])
    let id = 9000
    for (const text of ['fern', 'a\u007fb', 'a\tb', 'a\u0001b']) {
      const bodies: Array<[string, string, object]> = [
        ['/plants', 'NewPlant', { id: id++, name: text }],
        ['/plants', 'NewPlant', { id: id++, name: 'n', tag: text }],
        ['/webhooks', 'NewWebhook', { url: 'https://receiver.example/hook', description: text }],
      ]
      for (const [url, schema, body] of bodies) {
        const res = await t.app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        })
        expect(checker.matches(`#/components/schemas/${schema}`, body), JSON.stringify(body)).toBe(
          res.statusCode < 300,
        )
      }
    }
  })

  it('documents 500 for every operation behind a token, /metrics too', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if ((op.security as unknown[]).length === 0) continue
        expect(pick(op, 'responses', '500'), `${method} ${path}`).toBeDefined()
      }
    }
  })

  it('states the range of every int64 parameter, the listing cursor as the path id', () => {
    const int64 = Object.values(doc.paths)
      .flatMap((item) => Object.values(item))
      .flatMap(
        (op) =>
          (op.parameters ?? []) as Array<{ name: string; schema: { format?: string }; description?: string }>,
      )
      .filter((parameter) => parameter.schema.format === 'int64')
    expect(new Set(int64.map((parameter) => parameter.name))).toEqual(new Set(['id', 'after']))
    for (const parameter of int64) {
      expect(parameter.description, parameter.name).toContain('-9223372036854775808 to 9223372036854775807')
    }
  })

  it('describes every parameter, and gives every integer one its format', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const parameters = (op.parameters ?? []) as Array<{
          name: string
          in: string
          schema: { type?: string; format?: string }
          description?: string
        }>
        for (const parameter of parameters) {
          const where = `${method} ${path} ${parameter.in} ${parameter.name}`
          expect(parameter.description, where).toEqual(expect.any(String))
          if (parameter.schema.type === 'integer')
            expect(parameter.schema.format, where).toMatch(/^int(32|64)$/)
        }
      }
    }
  })

  it('gives every integer in the shapes its format, so that generated clients size it right', () => {
    const unsized: string[] = []
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        for (const [i, item] of node.entries()) walk(item, `${where}[${i}]`)
      } else if (node && typeof node === 'object') {
        const schema = node as { type?: unknown; format?: unknown }
        if (schema.type === 'integer' && !/^int(32|64)$/.test(String(schema.format))) unsized.push(where)
        for (const [key, value] of Object.entries(node)) walk(value, `${where}.${key}`)
      }
    }
    walk(pick(doc, 'components', 'schemas'), 'components.schemas')
    expect(unsized).toEqual([])
  })

  it('gives every error status the Error shape', () => {
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries(pick(op, 'responses') as Record<string, unknown>)) {
          if (Number(status) < 400) continue
          expect(pick(response, 'content', 'application/json', 'schema')).toEqual({
            $ref: '#/components/schemas/Error',
          })
          expect(pick(response, 'description')).toMatch(/error codes: \d{5}/)
        }
      }
    }
  })

  it("describes every response in its own words, none as the generator's Default Response", () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(pick(op, 'responses') as Record<string, unknown>)) {
          expect(pick(response, 'description'), `${method} ${path} ${status}`).not.toBe('Default Response')
        }
      }
    }
  })

  it('lists under each error response the codes of that operation, not every code of the status', () => {
    const description = (path: string, method: string, status: string) =>
      pick(doc, 'paths', path, method, 'responses', status, 'description')
    expect(description('/plants', 'get', '400')).toBe('The request is invalid (error codes: 40012, 40000)')
    expect(description('/plants/{id}', 'get', '404')).toBe('Not found (error codes: 40402)')
    expect(description('/webhooks/{id}', 'get', '404')).toBe('Not found (error codes: 40450)')
    expect(description('/plants', 'post', '409')).toBe('Conflict (error codes: 40901, 40902)')
    expect(description('/plants', 'post', '401')).toMatch(
      /40101, 40102, 40103, 40104, 40105, 40110, 40111, 40112, 40113, 40114, 40115, 40116, 40117, 40118\)$/,
    )
    expect(String(description('/plants', 'post', '400'))).not.toContain('40050')
  })

  it('lists under every operation the answers given before it runs', () => {
    // Refused before any operation reads it (test/http/pre-route-errors.test.ts gets each one).
    for (const [path, item] of Object.entries(pick(doc, 'paths') as Record<string, object>)) {
      for (const [method, operation] of Object.entries(item)) {
        const responses = (operation as { responses: Record<string, { description: string }> }).responses
        const codes = (status: string) => responses[status]?.description ?? ''
        expect(codes('400'), `${method} ${path}`).toMatch(/[ (]40000[,)]/)
        expect(codes('417'), `${method} ${path}`).toMatch(/\(error codes: 41701\)$/)
        // The change stream adds its own: 50302 past --max-streams.
        expect(codes('503'), `${method} ${path}`).toMatch(
          path === '/events/stream' ? /\(error codes: 50302, 50301\)$/ : /\(error codes: 50301\)$/,
        )
        // Only a body the operation reads can stall it past the request timeout.
        expect(codes('408') !== '', `${method} ${path}`).toBe('requestBody' in operation)
      }
    }
  })

  it('documents the headers of error answers', () => {
    const headers = (path: string, method: string, status: string) =>
      Object.keys(pick(doc, 'paths', path, method, 'responses', status, 'headers') as object)
    expect(headers('/plants', 'post', '401')).toEqual(['WWW-Authenticate'])
    expect(headers('/plants', 'post', '403')).toEqual(['WWW-Authenticate'])
    expect(headers('/plants', 'post', '429')).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
    )
    expect(headers('/plants', 'post', '503')).toEqual(['Retry-After'])
    expect(headers('/plants', 'post', '409')).toEqual(['Retry-After'])
    expect(headers('/webhooks', 'post', '201')).toEqual(['Location'])
  })

  it('describes the bearer challenge of 401 and 403 with the attributes each one carries', async () => {
    const answers = [
      {},
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer pst_not-a-token' },
      { authorization: `Bearer ${await t.token(['webhooks:manage'])}` },
    ]
    const seen: Record<string, Set<string>> = { '401': new Set(), '403': new Set() }
    for (const headers of answers) {
      const res = await t.app.inject({ method: 'GET', url: '/plants/1', headers })
      const challenge = String(res.headers['www-authenticate'])
      for (const [, name] of challenge.matchAll(/(\w+)="/g)) seen[res.statusCode]?.add(name as string)
    }
    expect(seen['403']?.size).toBeGreaterThan(0)
    for (const [status, names] of Object.entries(seen)) {
      const described = String(
        pick(
          doc,
          'paths',
          '/plants/{id}',
          'get',
          'responses',
          status,
          'headers',
          'WWW-Authenticate',
          'description',
        ),
      )
      for (const name of ['error', 'error_description', 'error_uri', 'scope']) {
        expect(new RegExp(`\\b${name}\\b`).test(described), `${status} ${name}`).toBe(names.has(name))
      }
    }
  })

  it('renders the error catalog', () => {
    expect(doc['x-error-codes']).toEqual(
      Object.entries(errors).map(([name, e]) => ({
        code: e.code,
        status: e.status,
        name,
        message: e.message,
      })),
    )
    expect(doc.info.description).toContain(`| 42201 | 422 | \`IDEMPOTENCY_KEY_REUSED\``)
  })

  it('declares the bearer scheme and the scope of each operation', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    const scopeOf = (path: string, method: string) => doc.paths[path]?.[method]?.security
    expect(scopeOf('/plants', 'post')).toEqual([{ bearerAuth: ['plants:write'] }])
    expect(scopeOf('/plants', 'get')).toEqual([{ bearerAuth: ['plants:read'] }])
    expect(scopeOf('/plants/{id}', 'delete')).toEqual([{ bearerAuth: ['plants:write'] }])
    expect(scopeOf('/healthz', 'get')).toEqual([])
  })

  it('documents ETag, If-Match, If-None-Match, Link and Idempotency-Key', () => {
    const headerNames = (path: string, method: string) =>
      (pick(doc, 'paths', path, method, 'parameters') as Array<{ in: string; name: string }>)
        .filter((p) => p.in === 'header')
        .map((p) => p.name)
    expect(headerNames('/plants/{id}', 'put')).toContain('if-match')
    expect(headerNames('/plants/{id}', 'get')).toContain('if-none-match')
    expect(headerNames('/plants', 'post')).toContain('idempotency-key')
    const item = pick(doc, 'paths', '/plants/{id}')
    expect(pick(item, 'get', 'responses', '200', 'headers', 'ETag')).toBeDefined()
    expect(pick(item, 'get', 'responses', '304')).toBeDefined()
    expect(pick(item, 'patch', 'requestBody', 'content', 'application/merge-patch+json')).toBeDefined()
    expect(pick(doc, 'paths', '/plants', 'get', 'responses', '200', 'headers', 'Link')).toBeDefined()
  })

  it('lists for each request body exactly the media types the operation accepts', async () => {
    const token = await t.token(['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage'])
    const sample: Record<string, string> = { id: '1', deliveryId: `dlv_${'0'.repeat(24)}` }
    const mediaTypes = ['application/json', 'application/merge-patch+json']
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const documented = pick(op, 'requestBody', 'content') as Record<string, unknown> | undefined
        if (!documented) continue
        const webhookPath = path.startsWith('/webhooks/')
        const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
          name === 'id' && webhookPath ? `wh_${'a'.repeat(22)}` : (sample[name] as string),
        )
        for (const type of mediaTypes) {
          const res = await t.app.inject({
            method: method.toUpperCase() as 'POST',
            url,
            headers: { authorization: `Bearer ${token}`, 'content-type': type },
            payload: '{}',
          })
          expect(res.statusCode !== 415, `${method.toUpperCase()} ${path} as ${type}`).toBe(
            type in documented,
          )
        }
      }
    }
  })

  it('serves the docs page and every asset it loads from this service, without a token', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs' })
    const html =
      page.statusCode === 302
        ? (
            await t.app.inject({
              method: 'GET',
              url: `/docs/${page.headers.location}`.replace('/docs//docs', '/docs'),
            })
          ).body
        : page.body
    expect(html).toContain('swagger-ui')
    expect(html).toMatch(/<title>Plant Store API<\/title>/)
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
    expect(assets.length).toBeGreaterThan(0)
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//)
      const url = asset.startsWith('/') ? asset : `/docs/${asset.replace(/^\.\//, '')}`
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(200)
    }
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    expect(initializer.statusCode).toBe(200)
    expect(initializer.body).not.toMatch(/["'`]https?:\/\//)
    expect(page.headers['content-security-policy']).toContain("default-src 'self'")
  })

  it.each(['/docs/static/', '/docs/static/index.html', '/docs/static/index.html?x=1'])(
    'sends %s to the docs page instead of a page without the document',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(302)
      expect(res.headers.location).toBe('/docs')
    },
  )

  it('answers a range or a precondition a docs asset cannot meet with its own status, not a 500', async () => {
    const url = '/docs/static/swagger-ui.css'
    const whole = await t.app.inject({ method: 'GET', url })
    expect(whole.statusCode).toBe(200)
    const length = whole.rawPayload.length
    const past = await t.app.inject({ method: 'GET', url, headers: { range: `bytes=${length}-` } })
    expect([past.statusCode, JSON.parse(past.body).error]).toEqual([416, errors.RANGE_NOT_SATISFIABLE.code])
    expect(past.headers['content-range']).toBe(`bytes */${length}`)
    for (const headers of [{ 'if-match': '"other"' }, { 'if-unmodified-since': new Date(0).toUTCString() }]) {
      const res = await t.app.inject({ method: 'GET', url, headers })
      expect([res.statusCode, JSON.parse(res.body).error]).toEqual([412, errors.PRECONDITION_FAILED.code])
    }
  })

  it('gives the docs page a policy with only what it needs: no data: fonts, no form targets', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs' })
    const policy = new Map(
      String(page.headers['content-security-policy'])
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .map(([name, ...sources]) => [name, sources.join(' ')]),
    )
    // Fonts fall back to default-src 'self'; form-action has no fallback and must be named.
    expect(policy.has('font-src')).toBe(false)
    expect(policy.get('default-src')).toBe("'self'")
    expect(policy.get('form-action')).toBe("'none'")
  })
})
