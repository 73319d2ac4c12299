import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { SCOPES } from '../../src/tokens/scopes.js'
import { makeApp, type TestApp } from '../helpers/app.js'
import { sqliteKind } from '../helpers/stores.js'

// What Schemathesis checks, with npm packages: a value the document's schema allows is not refused
// for that field, and every response matches the document (makeApp's inject checks each one).

type Schema = {
  $ref?: string
  type?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  anyOf?: Schema[]
  properties?: Record<string, Schema>
}
type Parameter = { name: string; in: string; schema: Schema }
type Operation = {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: Schema }> }
}
type Document = {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

/** Each field whose rule the document states, and the code the service refuses a bad value of it with. */
const FIELD_CODES: Record<string, number> = {
  'idempotency-key': errors.IDEMPOTENCY_KEY_INVALID.code,
  url: errors.WEBHOOK_URL_INVALID.code,
  expiresIn: errors.TOKEN_EXPIRES_IN_INVALID.code,
  rateLimit: errors.TOKEN_RATE_LIMIT_INVALID.code,
  overlap: errors.TOKEN_OVERLAP_INVALID.code,
}

/** Strings the schema allows: its pattern (a URL when it says only the scheme), within its lengths. */
function stringsOf(name: string, schema: Schema): fc.Arbitrary<string> {
  const text = schema.anyOf?.find((s) => s.type === 'string') ?? schema
  expect(text.pattern, `${name} states its rule as a pattern`).toBeDefined()
  const pattern = new RegExp(text.pattern as string)
  // A pattern cannot state the WHATWG URL rules the service applies (docs/webhooks.md): URLs are
  // generated as URLs, and kept when the schema allows them.
  const base =
    name === 'url'
      ? fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true })
      : fc.stringMatching(pattern)
  return base.filter(
    (value) =>
      pattern.test(value) &&
      value.length >= (text.minLength ?? 0) &&
      value.length <= (text.maxLength ?? Number.POSITIVE_INFINITY),
  )
}

describe('values the document allows', () => {
  let t: TestApp
  let admin: string
  let document: Document
  beforeAll(async () => {
    t = await makeApp(sqliteKind, { allowPrivateWebhookUrls: true })
    admin = await t.token([...SCOPES])
    document = (await t.app.inject({ url: '/openapi.json' })).json() as Document
  })
  afterAll(async () => {
    await t?.close()
  })

  const send = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    })

  let nextId = 1
  /** A request each operation with such a field takes as it is, the field aside. */
  const requests: Record<string, () => Promise<{ url: string; body: Record<string, unknown> }>> = {
    createPlant: async () => ({ url: '/plants', body: { id: nextId++, name: 'fuzzed' } }),
    createPlants: async () => ({
      url: '/plants/batch',
      body: { plants: [{ id: nextId++, name: 'fuzzed' }] },
    }),
    createToken: async () => ({ url: '/tokens', body: { name: 'fuzzed', scopes: ['plants:read'] } }),
    rollToken: async () => {
      const { record } = await t.tokens.create('rolled', ['plants:read'])
      return { url: `/tokens/${record.id}/roll`, body: {} }
    },
    createWebhook: async () => ({ url: '/webhooks', body: { url: 'http://127.0.0.1:9/hook' } }),
    updateWebhook: async () => {
      const created = await send('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook' })
      return { url: `/webhooks/${(created.json() as { id: string }).id}`, body: {} }
    },
  }

  it('is refused by no operation for that field, and each answer matches the document', async () => {
    const tried: string[] = []
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const headerFields = (operation.parameters ?? []).filter(
          (p) => p.in === 'header' && p.name.toLowerCase() in FIELD_CODES,
        )
        let bodySchema = operation.requestBody?.content['application/json']?.schema
        if (bodySchema?.$ref)
          bodySchema = document.components.schemas[bodySchema.$ref.split('/').pop() as string]
        const bodyFields = Object.entries(bodySchema?.properties ?? {}).filter(
          ([name]) => name in FIELD_CODES,
        )
        if (headerFields.length === 0 && bodyFields.length === 0) continue
        const base = requests[operation.operationId]
        expect(base, `a request for ${operation.operationId} (${method.toUpperCase()} ${path})`).toBeDefined()
        const fields = [
          ...headerFields.map((p) => ({ name: p.name.toLowerCase(), schema: p.schema, where: 'header' })),
          ...bodyFields.map(([name, schema]) => ({ name, schema, where: 'body' })),
        ]
        for (const field of fields) {
          tried.push(`${operation.operationId} ${field.name}`)
          await fc.assert(
            fc.asyncProperty(stringsOf(field.name, field.schema), async (value) => {
              const request = await (base as () => Promise<{ url: string; body: Record<string, unknown> }>)()
              const res =
                field.where === 'header'
                  ? await send(method, request.url, request.body, { [field.name]: value })
                  : await send(method, request.url, { ...request.body, [field.name]: value })
              const code = res.statusCode >= 400 ? (res.json() as { error: number }).error : undefined
              expect([value, code]).not.toEqual([value, FIELD_CODES[field.name]])
              expect(res.statusCode).toBeLessThan(500)
            }),
            { numRuns: 25 },
          )
        }
      }
    }
    expect(tried.sort()).toEqual(
      [
        'createPlant idempotency-key',
        'createPlants idempotency-key',
        'createToken expiresIn',
        'createToken rateLimit',
        'createWebhook url',
        'rollToken overlap',
        'updateWebhook url',
      ].sort(),
    )
  }, 120_000)
})
