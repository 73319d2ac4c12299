import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorOf, makeApp, type TestApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

// Almost-right requests to every documented operation, over real HTTP: each answer is one the
// document lists for the operation (the checked fetch throws otherwise), never a 5xx, an Error when
// it is an error, within a bound; and a refused write leaves the plants, subscriptions and
// deliveries as they were. Seeded and bounded: a few hundred requests per store.
const RUNS = { numRuns: 120, seed: 20240611 }
const ANSWER_WITHIN_MS = 5000

const HUGE = 'x'.repeat(300_000)

/** JSON texts that are nearly what a field wants: wrong types, edges of text and of int64. */
const oddValue = fc.constantFrom(
  'null',
  'true',
  '[]',
  '{}',
  '[1]',
  '""',
  '"   "',
  '"\\ud800"',
  '"a\\udc00b"',
  '"a\\u0000b"',
  '"\\u200f\\u202e"',
  `"${'e\u0301'.repeat(100)}"`,
  `"${'🌿'.repeat(100)}"`,
  `"${'🌿'.repeat(101)}"`,
  `"${'🌿'.repeat(200)}"`,
  `"${'🌿'.repeat(201)}"`,
  `"${'a'.repeat(501)}"`,
  `"${'a'.repeat(2001)}"`,
  `"${HUGE}"`,
  '"\\uFEFF"',
  '0',
  '-0',
  '0.0',
  '1.0',
  '1e3',
  '1E0',
  '-0.0',
  '1e-3',
  '0e0',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775808',
  '-9223372036854775809',
  '1e400',
  '123456789012345678901234567890',
  '"1"',
  '"9223372036854775808"',
  '"http://example.com/"',
  '"https://127.0.0.1/"',
  '"http://[::1]:0/"',
  '["plant.created"]',
  '["plant.created", "plant.created"]',
  '["nope"]',
  '"2020-01-01T00:00:00Z"',
  '"2020-02-30T00:00:00Z"',
  '"9999-12-31T23:59:59Z"',
  '"0000-01-01T00:00:00Z"',
  '"2020-01-01T00:00:60.123456789Z"',
  `${'['.repeat(3000)}${']'.repeat(3000)}`,
  `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`,
)

/** Raw JSON texts that break the number grammar, for numbers and ids. */
const badNumber = fc.constantFrom('01', '+1', '-', '1.', '.5', '0x10', 'NaN', 'Infinity', '1e', '--1')

type Fields = [string, string][]

const fieldsText = (fields: Fields) => `{${fields.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(', ')}}`

/** A valid body with one change: a field missing, replaced, duplicated, or an unknown one added. */
function nearly(valid: Fields): fc.Arbitrary<string> {
  const index = fc.nat({ max: valid.length - 1 })
  return fc.oneof(
    index.map((i) => fieldsText(valid.filter((_, j) => j !== i))),
    fc.tuple(index, oddValue).map(([i, v]) => fieldsText(valid.map((f, j) => (j === i ? [f[0], v] : f)))),
    fc.tuple(index, badNumber).map(([i, v]) => fieldsText(valid.map((f, j) => (j === i ? [f[0], v] : f)))),
    fc.tuple(index, oddValue).map(([i, v]) => fieldsText([...valid, [valid[i]?.[0] as string, v]])),
    fc.tuple(fc.string({ maxLength: 10 }), oddValue).map(([k, v]) => fieldsText([...valid, [k, v]])),
    fc.constantFrom(
      `[${fieldsText(valid)}]`,
      `${fieldsText(valid)} ${fieldsText(valid)}`,
      `${fieldsText(valid)},`,
      fieldsText(valid).slice(0, -1),
      `\uFEFF${fieldsText(valid)}`,
      '',
      '   ',
      'null',
      '"x"',
      '1',
    ),
  )
}

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=UTF-8',
  'application/json;charset="utf-8"',
  'application/json; charset=latin1',
  'application/JSON',
  'application/json; foo',
  'application/json ;',
  'application/json, text/plain',
  'application/merge-patch+json',
  'text/plain',
  '',
  undefined,
)

const etagish = fc.constantFrom('', '*', '"x"', 'W/"x"', ', ,', '"', `"${'a'.repeat(4000)}"`, '*, "x"', 'W/')
const extraHeaders = fc.record(
  {
    'if-match': etagish,
    'if-none-match': etagish,
    'idempotency-key': fc.constantFrom(
      '',
      ' ',
      '"',
      '""',
      'a'.repeat(255),
      'a'.repeat(256),
      'k 1',
      '"k"',
      'é',
    ),
    accept: fc.constantFrom('*/*', 'text/html', 'application/xml', '', 'application/json;q=0', 'a/b, c'),
    'accept-encoding': fc.constantFrom('gzip', 'br;q=0', 'identity;q=0, *;q=0', 'zstd', ''),
  },
  { requiredKeys: [] },
)

const plantId = fc.constantFrom(
  '1',
  '2',
  '-0',
  '01',
  '+1',
  '1e3',
  '1.0',
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '%20',
  '%00',
  '%FF',
  '%E2%80%AE1',
  'x'.repeat(3000),
)

const queryText = fc
  .array(
    fc.tuple(
      fc.constantFrom(
        'limit',
        'after',
        'tag',
        'q',
        'sort',
        'count',
        'cursor',
        'status',
        'x',
        '',
        'limit[]',
        'tag[a]',
      ),
      fc.constantFrom(
        '',
        '1',
        '0',
        '-1',
        '1000',
        '1001',
        '501',
        '01',
        '1e2',
        '1.5',
        '%FF',
        '%00',
        'pending',
        'true',
        '-name',
        '1.2',
        '9223372036854775808',
        'a'.repeat(5000),
        '%F0%9F%8C%BF'.repeat(101),
      ),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))

interface Call {
  method: string
  path: string
  body?: string
  type?: string
  headers: Record<string, string>
}

describe.each(storeKinds)('every operation under hostile input on $name', (kind) => {
  let t: TestApp
  let base: string
  let token: string
  let hook: string
  let delivery: string
  beforeAll(async () => {
    t = await makeApp(kind, { allowPrivateWebhookUrls: false })
    token = await t.token(['plants:read', 'plants:write', 'webhooks:manage', 'metrics:read'])
    base = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    for (const id of [1, 2, 3]) await send('POST', '/plants', { id, name: `p${id}`, tag: 'green' })
    hook = (
      (await (await send('POST', '/webhooks', { url: 'https://example.com/h' })).json()) as { id: string }
    ).id
    delivery = ((await (await send('POST', `/webhooks/${hook}/test`)).json()) as { id: string }).id
  })
  afterAll(() => t.close())

  /** What a refused write must leave alone. */
  async function state(): Promise<string> {
    const read = async (path: string) =>
      (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).text()
    return [
      await read('/plants?limit=1000'),
      await read('/webhooks'),
      await read(`/webhooks/${hook}/deliveries?limit=500`),
    ].join('\n')
  }

  async function exercise(call: Call): Promise<void> {
    const before = call.method === 'GET' ? '' : await state()
    const headers = new Headers({ authorization: `Bearer ${token}`, ...call.headers })
    if (call.type !== undefined) headers.set('content-type', call.type)
    const started = Date.now()
    const res = await t.checkedFetch(
      new Request(`${base}${call.path}`, {
        method: call.method,
        headers,
        ...(call.body === undefined ? {} : { body: call.body }),
        signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
      }),
    )
    const text = await res.text()
    const what = `${call.method} ${call.path.slice(0, 200)} ${String(call.body).slice(0, 300)} → ${res.status} ${text.slice(0, 300)}`
    expect(Date.now() - started, what).toBeLessThan(ANSWER_WITHIN_MS)
    expect(res.status, what).toBeLessThan(500)
    if (res.status >= 400) {
      errorOf({ body: text, headers: { 'content-type': res.headers.get('content-type') } })
      if (call.method !== 'GET') expect(await state(), what).toBe(before)
    }
  }

  const withBody = (method: string, path: fc.Arbitrary<string>, valid: Fields) =>
    fc.record({
      method: fc.constant(method),
      path,
      body: nearly(valid),
      type: contentType,
      headers: extraHeaders,
    }) as fc.Arbitrary<Call>
  const withoutBody = (method: string, path: fc.Arbitrary<string>) =>
    fc.record({ method: fc.constant(method), path, headers: extraHeaders }) as fc.Arbitrary<Call>

  it('answers every plant operation as documented', async () => {
    const one = plantId.map((id) => `/plants/${id}`)
    const calls = fc.oneof(
      withBody('POST', fc.constant('/plants'), [
        ['id', '77'],
        ['name', '"n"'],
        ['tag', '"t"'],
      ]),
      withBody('PUT', one, [
        ['id', '1'],
        ['name', '"n"'],
        ['tag', '"t"'],
      ]),
      withBody('PATCH', one, [
        ['name', '"n"'],
        ['tag', 'null'],
      ]),
      withoutBody('DELETE', one),
      withoutBody('GET', one),
      withoutBody(
        'GET',
        queryText.map((q) => `/plants?${q}`),
      ),
    )
    await fc.assert(fc.asyncProperty(calls, exercise), RUNS)
  }, 120_000)

  it('answers every webhook and operational operation as documented', async () => {
    const hookPath = fc.constantFrom(
      () => hook,
      () => 'wh_',
      () => `${hook}x`,
      () => encodeURIComponent(`${hook}\u0000`),
      () => 'wh_AAAAAAAAAAAAAAAAAAAAAA',
      () => 'x'.repeat(3000),
      () => '%FF',
    )
    const p = (suffix: string) => hookPath.map((h) => `/webhooks/${h()}${suffix}`)
    const calls = fc.oneof(
      withBody('POST', fc.constant('/webhooks'), [
        ['url', '"https://example.com/a"'],
        ['events', '["plant.created"]'],
        ['description', '"d"'],
      ]),
      withoutBody('GET', fc.constant('/webhooks')),
      withoutBody('GET', p('')),
      withBody('PATCH', p(''), [
        ['url', '"https://example.com/b"'],
        ['disabled', 'false'],
        ['description', 'null'],
      ]),
      withoutBody('DELETE', fc.constant('/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA')),
      withoutBody('POST', fc.constant('/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA/rotate-secret')),
      withoutBody('POST', fc.constant('/webhooks/wh_AAAAAAAAAAAAAAAAAAAAAA/test')),
      withoutBody(
        'GET',
        fc.tuple(hookPath, queryText).map(([h, q]) => `/webhooks/${h()}/deliveries?${q}`),
      ),
      withoutBody(
        'POST',
        fc
          .tuple(
            hookPath,
            fc.constantFrom(
              () => delivery,
              () => 'dlv_',
              () => '%FF',
              () => `${delivery}0`,
            ),
          )
          .map(([h, d]) => `/webhooks/${h()}/deliveries/${d()}/retry`),
      ),
      withBody('POST', p('/replay'), [['since', '"2999-01-01T00:00:00Z"']]),
      withBody('POST', p('/recover'), [['since', '"2020-01-01T00:00:00Z"']]),
      withoutBody(
        'GET',
        fc
          .tuple(hookPath, queryText)
          .map(([h, q]) => `/webhooks/${h()}/deliveries/dlv_000000000000000000000000/attempts?${q}`),
      ),
      withoutBody(
        'GET',
        fc.tuple(fc.constantFrom('/healthz', '/readyz', '/metrics'), queryText).map(([u, q]) => `${u}?${q}`),
      ),
    )
    await fc.assert(fc.asyncProperty(calls, exercise), RUNS)
  }, 120_000)
})
