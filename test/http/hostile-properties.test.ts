import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { plantJson } from '../../src/plants/events.js'
import { INT64_MAX, INT64_MIN } from '../../src/plants/int64.js'
import { appForSuite, errorOf, postPlant, type TestApp } from '../helpers/app.js'
import { storeKinds } from '../helpers/stores.js'

// Generated garbage thrown at the real application: whatever arrives, the answer is never a 5xx, every
// 4xx is exactly the Error shape, and a valid plant always round-trips. Run counts keep this to seconds.
const RUNS = { numRuns: 150 }

type Response = Awaited<ReturnType<TestApp['app']['inject']>>

function expectPrecise(res: Response): void {
  expect(res.statusCode, res.body).toBeLessThan(500)
  if (res.statusCode >= 400) errorOf(res)
}

/** Text without C0 controls or lone surrogates, 1 to max code points: what the API accepts. */
const text = (max: number) =>
  fc
    .string({
      unit: fc.oneof(
        fc.constantFrom('a', 'é', ' ', '"', '\\', '🌿', '中', '\u007f', '\u2028'),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
      minLength: 1,
      maxLength: max,
    })
    .filter((s) => [...s].length <= max && [...s].every((c) => (c.codePointAt(0) as number) >= 0x20))

const int64 = fc.bigInt(INT64_MIN, INT64_MAX)

describe.each(storeKinds)('hostile input properties on $name', (kind) => {
  const t = appForSuite(kind)
  const used = new Set<bigint>()

  it('round-trips every valid NewPlant exactly, through create and read', async () => {
    await fc.assert(
      fc.asyncProperty(int64, text(200), fc.option(text(100), { nil: undefined }), async (id, name, tag) => {
        const plant = tag === undefined ? { id, name } : { id, name, tag }
        const res = await postPlant(t.app, t.bearer, plantJson(plant))
        if (used.has(id)) {
          expect(res.statusCode).toBe(409)
          return
        }
        used.add(id)
        expect(res.statusCode, res.body).toBe(200)
        expect(res.body).toBe(plantJson(plant))
        const read = await t.app.inject({
          url: `/plants/${id}`,
          headers: { authorization: `Bearer ${t.bearer}` },
        })
        expect(read.body).toBe(plantJson(plant))
      }),
      RUNS,
    )
  })

  it('answers any body string precisely', async () => {
    const bodies = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.json({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({ id: fc.jsonValue(), name: fc.jsonValue(), tag: fc.jsonValue() }, { requiredKeys: [] })
        .map((v) => JSON.stringify(v)),
      fc
        .tuple(int64, fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 }))
        .map(([id, pre, post]) => `${pre}{"id": ${id}, "name": "x"${post}`),
    )
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const res = await postPlant(t.app, t.bearer, body)
        expectPrecise(res)
        if (res.statusCode === 200) {
          const created = JSON.parse(res.body) as { id: unknown }
          expect(Object.keys(created)).toEqual(expect.arrayContaining(['id', 'name']))
        }
      }),
      RUNS,
    )
  })

  it('answers any path id precisely', async () => {
    const ids = fc.oneof(
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.constantFrom('-0', '01', '1e3', '0x10', ' 1', '1 ', '%00', '..', '%2e%2e', '9223372036854775808'),
    )
    await fc.assert(
      fc.asyncProperty(ids, async (id) => {
        const res = await t.app.inject({
          url: `/plants/${encodeURIComponent(id)}`,
          headers: { authorization: `Bearer ${t.bearer}` },
        })
        expectPrecise(res)
        expect([200, 400, 404]).toContain(res.statusCode)
      }),
      RUNS,
    )
  })

  it('answers any query string precisely', async () => {
    const pairs = fc.array(fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 40 })), {
      maxLength: 6,
    })
    await fc.assert(
      fc.asyncProperty(
        pairs,
        fc.constantFrom('/plants/1', '/plants', '/healthz', '/metrics'),
        async (query, path) => {
          const qs = query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')
          const res = await t.app.inject({
            method: path === '/plants' ? 'POST' : 'GET',
            url: `${path}?${qs}`,
            headers: { authorization: `Bearer ${t.bearer}`, 'content-type': 'application/json' },
            ...(path === '/plants' ? { payload: '{"id": 1, "name": "q"}' } : {}),
          })
          expectPrecise(res)
        },
      ),
      RUNS,
    )
  })

  it('answers any set of headers precisely', async () => {
    const tokenChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_!#$%&*+.^`|~')
    const headerName = fc.string({ unit: tokenChars, minLength: 1, maxLength: 20 })
    const headerValue = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 80,
    })
    const known = fc.constantFrom(
      'authorization',
      'content-type',
      'content-encoding',
      'accept',
      'accept-encoding',
      'x-request-id',
      'idempotency-key',
      'if-match',
      'x-forwarded-for',
      'origin',
      'transfer-encoding',
    )
    const headers = fc.dictionary(fc.oneof(known, headerName), headerValue, { maxKeys: 8 })
    await fc.assert(
      fc.asyncProperty(headers, fc.boolean(), async (extra, withToken) => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/plants',
          headers: {
            ...(withToken ? { authorization: `Bearer ${t.bearer}` } : {}),
            'content-type': 'application/json',
            ...extra,
          },
          payload: '{"id": 5, "name": "headers"}',
        })
        expectPrecise(res)
      }),
      RUNS,
    )
  })
})
