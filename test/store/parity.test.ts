import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { INT64_MAX, INT64_MIN } from '../../src/plants/int64.js'
import { makeApp, type TestApp } from '../helpers/app.js'
import { postgresKind, sqliteKind } from '../helpers/stores.js'

// Generated sequences of operations run against one service on SQLite and one on PostgreSQL: every
// answer is the same status, body and headers, once what each store makes up on its own (webhook,
// delivery and message ids, secrets, times) is named by order of appearance. The docs promise the
// same HTTP behaviour on both; where a store may differ, it says so, and nothing here touches that.

const IDS = [
  INT64_MIN,
  INT64_MIN + 1n,
  -(2n ** 53n) - 1n,
  -1n,
  0n,
  1n,
  7n,
  2n ** 31n,
  2n ** 53n + 1n,
  INT64_MAX - 1n,
  INT64_MAX,
].map(String)

/** Text as a JSON string literal, lone surrogates written as \u escapes (JSON.stringify does so). */
const literal = (s: string) => JSON.stringify(s)

const oddText = fc.oneof(
  fc.constantFrom(
    'Monstera',
    'monstera',
    'MONSTERA',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    '\ud83c\udf35',
    'e\u0301',
    '\u00e9',
    'A\u030a',
    '\u00c5',
    '\u212b',
    'ß',
    'SS',
    'İ',
    'i̇',
    '\u200d',
    '\ufeff',
    '\uffff',
    '\u{10ffff}',
    '\u2028\u2029',
    '\u007f',
    ' ',
    ' lead',
    'trail ',
    '%',
    '_',
    'a%',
    'a_c',
    'abc',
    '\\',
    "'",
    '"',
    '&=+#?',
    'a\tb',
    '',
    'x'.repeat(100),
    'x'.repeat(101),
    '🌵'.repeat(100),
    '🌵'.repeat(101),
    'n'.repeat(200),
    'n'.repeat(201),
    '\u0301'.repeat(200),
    '\ud83c\udf35'.repeat(200),
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
)

const tagText = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('aroid', 'fern', 'Aroid', 'aroi', 'aroid ', 'ar%', 'ar_id') },
  { weight: 2, arbitrary: oddText },
)

const id = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...IDS) },
  { weight: 1, arbitrary: fc.bigInt(-50n, 50n).map(String) },
)

/** Which precondition a write or read carries: none, any, the last ETag seen for the id, or another. */
const precondition = fc.constantFrom<Precondition>(
  'none',
  'none',
  'match-last',
  'match-any',
  'match-other',
  'none-match-last',
  'none-match-any',
  'none-match-other',
  'match-weak-last',
)
type Precondition =
  | 'none'
  | 'match-last'
  | 'match-any'
  | 'match-other'
  | 'none-match-last'
  | 'none-match-any'
  | 'none-match-other'
  | 'match-weak-last'

const plantFields = fc.record({
  name: fc.option(oddText, { nil: undefined, freq: 8 }),
  tag: fc.oneof(
    { weight: 3, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 3, arbitrary: tagText },
    { weight: 1, arbitrary: fc.constant<null>(null) },
  ),
})

interface Fields {
  name?: string | undefined
  tag?: string | null | undefined
}

interface Create {
  op: 'create'
  id: string
  fields: Fields
  key: string | undefined
  /** Makes the key one not used before. */
  fresh: number | undefined
}

function fieldsJson(fields: Fields): string[] {
  const parts: string[] = []
  if (fields.name !== undefined) parts.push(`"name": ${literal(fields.name)}`)
  if (fields.tag !== undefined) parts.push(`"tag": ${fields.tag === null ? 'null' : literal(fields.tag)}`)
  return parts
}

const webhookUrl = fc.constantFrom(
  'https://receiver.example/hook',
  'https://receiver.example/hook',
  'https://receiver.example/hook',
  'https://receiver.example/h%C3%A9',
  'https://receiver.example/hé',
  'http://receiver.example:8080/a?b=c',
  'ftp://receiver.example/',
  'https://receiver.example/\ud800',
  `https://receiver.example/${'p'.repeat(1990)}`,
  `https://receiver.example/${'p'.repeat(2000)}`,
)
const webhookEvents = fc.option(
  fc.oneof(
    fc.subarray(['plant.created', 'plant.updated', 'plant.deleted']),
    fc.constantFrom(['plant.created', 'plant.created'], ['webhook.test'], ['nope']),
  ),
  { nil: undefined },
)
const description = fc.option(fc.oneof(oddText, fc.constantFrom('d'.repeat(500), 'd'.repeat(501))), {
  nil: undefined,
})

const createOp: fc.Arbitrary<Create> = fc.record({
  op: fc.constant('create' as const),
  id,
  fields: plantFields,
  key: fc.option(fc.constantFrom('k1', 'k2', '"k 3"', 'k\u00e9', ''), { nil: undefined }),
  // Most keys are new: a key stays taken for the rest of the run.
  fresh: fc.option(fc.nat(), { nil: undefined }),
})

/** A valid create with a key, to send again: retries, alone or side by side. */
const keyedCreate: fc.Arbitrary<Create> = fc.record({
  op: fc.constant('create' as const),
  id,
  fields: fc.record({
    name: fc.constantFrom('Monstera', 'e\u0301', '🌵'),
    tag: fc.constantFrom(undefined, 'aroid'),
  }),
  key: fc.constantFrom('k1', '"k 3"', 'retry'),
  fresh: fc.option(fc.nat(), { nil: undefined }),
})

const operation = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .tuple(keyedCreate, fc.integer({ min: 2, max: 3 }), fc.boolean(), fc.boolean())
      .map(([c, n, changed, together]) => ({
        op: together ? ('burst' as const) : ('retries' as const),
        creates: Array.from({ length: n }, (_, i) => ({
          ...c,
          // Sent together, requests with a key reach the store in the order their key lookups
          // finish, which PostgreSQL does not promise, and one that arrives while the first with its
          // key runs is 409 (40902): which of them wins is open, so those go without a key.
          ...(together ? { key: undefined } : {}),
          fields: changed && i === n - 1 ? { ...c.fields, name: 'other' } : c.fields,
        })),
      })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('burst' as const),
      creates: fc.array(
        createOp.map((c): Create => ({ ...c, key: undefined })),
        { minLength: 2, maxLength: 4 },
      ),
    }),
  },
  { weight: 6, arbitrary: createOp },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('list' as const),
      limit: fc.option(fc.constantFrom('1', '2', '3', '1000', '1001', '0', 'x'), { nil: undefined }),
      after: fc.option(fc.oneof(id, fc.constantFrom('next', 'next', '9223372036854775808', '')), {
        nil: undefined,
      }),
      tag: fc.option(tagText, { nil: undefined }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('get' as const), id, pre: precondition }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('put' as const), id, pre: precondition, fields: plantFields }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('patch' as const),
      id,
      pre: precondition,
      fields: plantFields,
      merge: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), id, pre: precondition }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('subscribe' as const),
      url: webhookUrl,
      events: webhookEvents,
      description,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constantFrom(
        'webhook-get' as const,
        'webhook-delete' as const,
        'webhook-rotate' as const,
        'webhook-test' as const,
        'webhook-deliveries' as const,
      ),
      which: fc.nat(4),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('webhook-patch' as const),
      which: fc.nat(4),
      url: fc.option(webhookUrl, { nil: undefined }),
      events: webhookEvents,
      description: fc.option(fc.oneof(description, fc.constant(null)), { nil: undefined }),
      disabled: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'webhook-list' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('webhook-page' as const),
      which: fc.nat(2),
      status: fc.option(fc.constantFrom('pending', 'succeeded', 'failed', 'other'), { nil: undefined }),
      limit: fc.constantFrom('1', '2', '500', '501'),
      next: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('webhook-retry' as const),
      which: fc.nat(2),
      delivery: fc.constantFrom('last', 'last', 'dlv_000000000000000000000000', 'dlv_x'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constantFrom('webhook-replay' as const, 'webhook-recover' as const),
      which: fc.nat(2),
      since: fc.constantFrom(
        '1970-01-01T00:00:00Z',
        '2000-01-01T00:00:00.000+02:00',
        '2999-01-01T00:00:00Z',
        'yesterday',
        '',
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('webhook-attempts' as const),
      which: fc.nat(2),
      delivery: fc.constantFrom('last', 'last', 'dlv_000000000000000000000000', 'dlv_x'),
      limit: fc.constantFrom('1', '500', '501'),
    }),
  },
)
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never

interface Side {
  t: TestApp
  plantToken: string
  hookToken: string
  /** Subscriptions in the order they were made (the ones since deleted too). */
  hooks: string[]
  /** The last delivery listed, and the next page's link, of the last deliveries page. */
  lastDelivery?: string
  deliveriesNext?: string
  /** Generated ids and secrets, each named by its first appearance. */
  names: Map<string, string>
}

// Set per request, or by the clock.
const UNCOMPARED = new Set(['date', 'x-request-id', 'content-length'])
const GENERATED = /\b(?:wh|dlv|msg|whsec)_[A-Za-z0-9_+/=-]+/g
// A delivery cursor is its time and its event's number.
const CURSOR = /after=\d+\.\d+/g
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g

function normalise(side: Side, text: string): string {
  return text
    .replace(GENERATED, (found) => {
      let named = side.names.get(found)
      if (named === undefined) {
        named = `${found.slice(0, found.indexOf('_'))}#${side.names.size}`
        side.names.set(found, named)
      }
      return named
    })
    .replace(TIME, '(time)')
    .replace(CURSOR, 'after=(cursor)')
}

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

function answer(side: Side, res: LightMyRequestResponse): Answer {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(res.headers)) {
    if (UNCOMPARED.has(name) || value === undefined) continue
    headers[name] = normalise(side, String(value))
  }
  return { status: res.statusCode, headers, body: normalise(side, res.body) }
}

/** Shared between the two sides: what the generated operations refer to by role. */
interface Memory {
  lastEtag: Map<string, string>
  nextCursor: string | undefined
}

function conditionHeaders(pre: Precondition, last: string | undefined): Record<string, string> {
  const etag = last ?? '"1-AAAAAAAAAAAAAAAA"'
  switch (pre) {
    case 'none':
      return {}
    case 'match-last':
      return { 'if-match': etag }
    case 'match-any':
      return { 'if-match': '*' }
    case 'match-other':
      return { 'if-match': '"9-AAAAAAAAAAAAAAAA", "x"' }
    case 'none-match-last':
      return { 'if-none-match': etag }
    case 'none-match-any':
      return { 'if-none-match': '*' }
    case 'none-match-other':
      return { 'if-none-match': '"9-AAAAAAAAAAAAAAAA"' }
    case 'match-weak-last':
      return { 'if-match': `W/${etag}` }
  }
}

async function run(
  side: Side,
  op: Operation,
  memory: Memory,
): Promise<LightMyRequestResponse | LightMyRequestResponse[]> {
  const plants = { authorization: `Bearer ${side.plantToken}` }
  const hooks = { authorization: `Bearer ${side.hookToken}` }
  const json = { 'content-type': 'application/json' }
  const hook = (which: number) => side.hooks[side.hooks.length - 1 - which] ?? 'wh_AAAAAAAAAAAAAAAAAAAAAA'
  const app = side.t.app
  switch (op.op) {
    case 'burst':
      // Sent together: creates of one turn are written in one batch, on either store.
      return Promise.all(op.creates.map((c) => run(side, c, memory) as Promise<LightMyRequestResponse>))
    case 'retries': {
      const answers: LightMyRequestResponse[] = []
      for (const c of op.creates) answers.push((await run(side, c, memory)) as LightMyRequestResponse)
      return answers
    }
    case 'create': {
      const body = `{"id": ${op.id}${fieldsJson(op.fields)
        .map((p) => `, ${p}`)
        .join('')}}`
      const key =
        op.key === undefined
          ? {}
          : { 'idempotency-key': op.fresh === undefined ? op.key : `${op.key}-${op.fresh}` }
      return app.inject({
        method: 'POST',
        url: '/plants',
        headers: { ...plants, ...json, ...key },
        payload: body,
      })
    }
    case 'list': {
      const query = new URLSearchParams()
      if (op.limit !== undefined) query.set('limit', op.limit)
      if (op.after === 'next') {
        if (memory.nextCursor !== undefined) query.set('after', memory.nextCursor)
      } else if (op.after !== undefined) query.set('after', op.after)
      if (op.tag !== undefined) query.set('tag', op.tag)
      const search = query.toString()
      return app.inject({ url: `/plants${search ? `?${search}` : ''}`, headers: plants })
    }
    case 'get':
      return app.inject({
        url: `/plants/${op.id}`,
        headers: { ...plants, ...conditionHeaders(op.pre, memory.lastEtag.get(op.id)) },
      })
    case 'put':
      return app.inject({
        method: 'PUT',
        url: `/plants/${op.id}`,
        headers: { ...plants, ...json, ...conditionHeaders(op.pre, memory.lastEtag.get(op.id)) },
        payload: `{${fieldsJson(op.fields).join(', ')}}`,
      })
    case 'patch':
      return app.inject({
        method: 'PATCH',
        url: `/plants/${op.id}`,
        headers: {
          ...plants,
          'content-type': op.merge ? 'application/merge-patch+json' : 'application/json',
          ...conditionHeaders(op.pre, memory.lastEtag.get(op.id)),
        },
        payload: `{${fieldsJson(op.fields).join(', ')}}`,
      })
    case 'delete':
      return app.inject({
        method: 'DELETE',
        url: `/plants/${op.id}`,
        headers: { ...plants, ...conditionHeaders(op.pre, memory.lastEtag.get(op.id)) },
      })
    case 'subscribe': {
      const parts = [`"url": ${literal(op.url)}`]
      if (op.events !== undefined) parts.push(`"events": ${JSON.stringify(op.events)}`)
      if (op.description !== undefined) parts.push(`"description": ${literal(op.description)}`)
      const res = await app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: { ...hooks, ...json },
        payload: `{${parts.join(', ')}}`,
      })
      if (res.statusCode === 201) side.hooks.push((JSON.parse(res.body) as { id: string }).id)
      // Subscriptions list in the order they were made, to the millisecond: keep them apart.
      await new Promise((resolve) => setTimeout(resolve, 3))
      return res
    }
    case 'webhook-list':
      return app.inject({ url: '/webhooks', headers: hooks })
    case 'webhook-get':
      return app.inject({ url: `/webhooks/${hook(op.which)}`, headers: hooks })
    case 'webhook-delete':
      return app.inject({ method: 'DELETE', url: `/webhooks/${hook(op.which)}`, headers: hooks })
    case 'webhook-rotate':
      return app.inject({ method: 'POST', url: `/webhooks/${hook(op.which)}/rotate-secret`, headers: hooks })
    case 'webhook-test':
      return app.inject({ method: 'POST', url: `/webhooks/${hook(op.which)}/test`, headers: hooks })
    case 'webhook-deliveries':
      return app.inject({ url: `/webhooks/${hook(op.which)}/deliveries?limit=2`, headers: hooks })
    case 'webhook-page': {
      const query = new URLSearchParams({ limit: op.limit })
      if (op.status !== undefined) query.set('status', op.status)
      const url =
        op.next && side.deliveriesNext
          ? side.deliveriesNext
          : `/webhooks/${hook(op.which)}/deliveries?${query}`
      const res = await app.inject({ url, headers: hooks })
      if (res.statusCode === 200) {
        const link = res.headers.link
        side.deliveriesNext = typeof link === 'string' ? /<([^>]*)>/.exec(link)?.[1] : undefined
        const { data } = JSON.parse(res.body) as { data: { id: string }[] }
        side.lastDelivery = data[data.length - 1]?.id ?? side.lastDelivery
      }
      return res
    }
    case 'webhook-retry': {
      const delivery =
        op.delivery === 'last' ? (side.lastDelivery ?? 'dlv_000000000000000000000000') : op.delivery
      return app.inject({
        method: 'POST',
        url: `/webhooks/${hook(op.which)}/deliveries/${delivery}/retry`,
        headers: hooks,
      })
    }
    case 'webhook-attempts': {
      const delivery =
        op.delivery === 'last' ? (side.lastDelivery ?? 'dlv_000000000000000000000000') : op.delivery
      return app.inject({
        url: `/webhooks/${hook(op.which)}/deliveries/${delivery}/attempts?limit=${op.limit}`,
        headers: hooks,
      })
    }
    case 'webhook-replay':
    case 'webhook-recover':
      return app.inject({
        method: 'POST',
        url: `/webhooks/${hook(op.which)}/${op.op === 'webhook-replay' ? 'replay' : 'recover'}`,
        headers: { ...hooks, ...json },
        payload: JSON.stringify({ since: op.since }),
      })
    case 'webhook-patch': {
      const parts: string[] = []
      if (op.url !== undefined) parts.push(`"url": ${literal(op.url)}`)
      if (op.events !== undefined) parts.push(`"events": ${JSON.stringify(op.events)}`)
      if (op.description !== undefined)
        parts.push(`"description": ${op.description === null ? 'null' : literal(op.description)}`)
      if (op.disabled !== undefined) parts.push(`"disabled": ${op.disabled}`)
      return app.inject({
        method: 'PATCH',
        url: `/webhooks/${hook(op.which)}`,
        headers: { ...hooks, ...json },
        payload: `{${parts.join(', ')}}`,
      })
    }
  }
}

/** What the next operations refer to: the ETag a plant answered with, the last page's cursor. */
function remember(memory: Memory, op: Operation, res: LightMyRequestResponse): void {
  const etag = res.headers.etag
  if ('id' in op && typeof etag === 'string') memory.lastEtag.set(op.id, etag)
  if (op.op === 'list' && res.statusCode === 200) {
    const link = res.headers.link
    memory.nextCursor = typeof link === 'string' ? /[?&]after=([^&>]*)/.exec(link)?.[1] : undefined
  }
}

async function side(kind: NonNullable<typeof postgresKind>): Promise<Side> {
  const t = await makeApp(kind)
  return {
    t,
    plantToken: await t.token(),
    hookToken: await t.token(['webhooks:manage']),
    hooks: [],
    names: new Map(),
  }
}

describe.skipIf(!postgresKind)('SQLite and PostgreSQL answer alike (generated)', () => {
  let sqlite: Side
  let postgres: Side
  beforeAll(async () => {
    sqlite = await side(sqliteKind)
    postgres = await side(postgresKind as NonNullable<typeof postgresKind>)
  })
  afterAll(async () => {
    await sqlite?.t.close()
    await postgres?.t.close()
  })

  it('for any sequence of plant and webhook operations', async () => {
    const memory: Memory = { lastEtag: new Map(), nextCursor: undefined }
    let step = 0
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 30 }), async (ops) => {
        for (const op of ops) {
          step++
          const a = await run(sqlite, op, memory)
          const b = await run(postgres, op, memory)
          // PostgreSQL leaves making a change's deliveries to the dispatcher's next pass; this is
          // that pass, so that both have them when next asked.
          for (const s of [sqlite, postgres]) await s.t.store.webhooks.fanOut(1000, new Date())
          const seen = (s: Side, r: LightMyRequestResponse | LightMyRequestResponse[]) =>
            Array.isArray(r) ? r.map((x) => answer(s, x)) : answer(s, r)
          expect(seen(postgres, b), `step ${step}: ${JSON.stringify(op)}`).toEqual(seen(sqlite, a))
          if (Array.isArray(a)) {
            const creates = (op as { creates: Create[] }).creates
            for (const [i, c] of creates.entries()) remember(memory, c, a[i] as LightMyRequestResponse)
          } else remember(memory, op, a)
        }
      }),
      { numRuns: 100, seed: 20250314, endOnFailure: true },
    )
  }, 60_000)
})
