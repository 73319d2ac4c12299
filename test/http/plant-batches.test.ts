import { describe, expect, it } from 'vitest'
import { errors } from '../../src/errors.js'
import { BATCH_BODY_LIMIT } from '../../src/plants/batch.js'
import { NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '../../src/plants/model.js'
import { appForSuite, errorOf } from '../helpers/app.js'
import { storedPlantIds, storeKinds } from '../helpers/stores.js'

/** The largest plant a batch can hold: the longest id, name and tag, in four-byte characters. */
const largest = (id: bigint) => ({
  id: String(id),
  name: '\u{1F33F}'.repeat(NAME_MAX_LENGTH),
  tag: '\u{1FAB4}'.repeat(TAG_MAX_LENGTH),
})

/** A plant as JSON text, id written as a bare integer. */
const plantText = (p: { id: bigint | string; name: string; tag?: string }) =>
  `{"id":${p.id},"name":${JSON.stringify(p.name)}${p.tag === undefined ? '' : `,"tag":${JSON.stringify(p.tag)}`}}`

const batchText = (plants: Array<{ id: bigint | string; name: string; tag?: string }>) =>
  `{"plants":[${plants.map(plantText).join(',')}]}`

describe.each(storeKinds)('batch create and delete on $name', (kind) => {
  const t = appForSuite(kind)

  const post = (url: string, body: string, headers: Record<string, string> = {}, as = t.bearer) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json', ...headers },
      payload: body,
    })
  const createBatch = (body: string, headers?: Record<string, string>, as?: string) =>
    post('/plants/batch', body, headers, as)
  const deleteBatch = (body: string, as?: string) => post('/plants/batch-delete', body, {}, as)
  const stored = () => storedPlantIds(t.url)
  /** The plant ids of the outbox's events of this type, read from their payloads' text (exact). */
  const events = async (type: string) =>
    (await t.store.events.listSince(0, 100_000))
      .filter((e) => e.type === type)
      .map((e) => /"data":\{"id":(-?\d+)/.exec(e.payload)?.[1])

  describe('POST /plants/batch', () => {
    it('creates every plant and responds with them in the order sent, each with its own event', async () => {
      const plants = [
        { id: 103n, name: 'third', tag: 'fern' },
        { id: 101n, name: 'first' },
        { id: 9007199254740993n, name: 'past 2^53' },
      ]
      const res = await createBatch(batchText(plants))
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(batchText(plants))
      const ids = await stored()
      for (const p of plants) expect(ids.has(String(p.id))).toBe(true)
      const created = await events('plant.created')
      for (const p of plants) expect(created.filter((id) => id === String(p.id))).toHaveLength(1)
    })

    it('writes nothing when one item is invalid, naming its index and field', async () => {
      const before = await stored()
      const res = await createBatch(
        `{"plants":[{"id":201,"name":"ok"},{"id":202,"name":"ok"},{"id":203,"name":""},{"id":204}]}`,
      )
      expect(res.statusCode).toBe(400)
      expect(errorOf(res)).toEqual({
        error: errors.NAME_LENGTH.code,
        message: 'The field plants[2].name must be 1 to 200 characters long.',
      })
      expect(await stored()).toEqual(before)
    })

    it('names a missing id, a bad id and an item that is not an object by their index', async () => {
      const missing = await createBatch('{"plants":[{"id":1,"name":"a"},{"name":"no id"}]}')
      expect(errorOf(missing)).toEqual({
        error: errors.ID_MISSING.code,
        message: 'The field plants[1].id is required.',
      })
      const bad = await createBatch('{"plants":[{"id":1.5,"name":"a"}]}')
      expect(errorOf(bad).error).toBe(errors.ID_INVALID.code)
      expect(errorOf(bad).message).toMatch(/^The field plants\[0\]\.id must be/)
      const scalar = await createBatch('{"plants":[{"id":1,"name":"a"},7]}')
      expect(errorOf(scalar)).toEqual({
        error: errors.BATCH_PLANTS_INVALID.code,
        message: 'The field plants[1] must be a plant object.',
      })
    })

    it.each([
      [
        'a tag that is not a string',
        '{"id":1,"name":"a","tag":5}',
        errors.TAG_INVALID,
        'The field plants[1].tag must be a string.',
      ],
      [
        'an empty tag',
        '{"id":1,"name":"a","tag":""}',
        errors.TAG_LENGTH,
        'The field plants[1].tag must be 1 to 100 characters long.',
      ],
      [
        'a control character',
        '{"id":1,"name":"a\\u0007"}',
        errors.TEXT_CHARACTERS,
        'The field plants[1].name must not contain control characters or lone surrogates.',
      ],
    ])('refuses %s in an item with its field code', async (_what, item, entry, message) => {
      const res = await createBatch(`{"plants":[{"id":0,"name":"fine"},${item}]}`)
      expect(errorOf(res)).toEqual({ error: entry.code, message })
    })

    it('refuses a malformed Idempotency-Key, and a retry while the first is running', async () => {
      const bad = await createBatch(batchText([{ id: 651n, name: 'a' }]), { 'idempotency-key': '' })
      expect(errorOf(bad).error).toBe(errors.IDEMPOTENCY_KEY_INVALID.code)
      const body = batchText([{ id: 652n, name: 'a' }])
      const both = await Promise.all([
        createBatch(body, { 'idempotency-key': 'batch-running' }),
        createBatch(body, { 'idempotency-key': 'batch-running' }),
      ])
      expect(both.map((r) => r.statusCode).sort()).toEqual([200, 409])
      const conflict = both.find((r) => r.statusCode === 409) as (typeof both)[number]
      expect(errorOf(conflict).error).toBe(errors.IDEMPOTENCY_IN_PROGRESS.code)
    })

    it('writes nothing when an id is stored already: 409 naming the item', async () => {
      expect((await createBatch(batchText([{ id: 301n, name: 'stored' }]))).statusCode).toBe(200)
      const before = await stored()
      const createdBefore = (await events('plant.created')).length
      const res = await createBatch(
        batchText([
          { id: 302n, name: 'new' },
          { id: 303n, name: 'new' },
          { id: 301n, name: 'again' },
        ]),
      )
      expect(res.statusCode).toBe(409)
      expect(errorOf(res)).toEqual({
        error: errors.PLANT_EXISTS.code,
        message: 'Item 2: a plant with id 301 already exists.',
      })
      expect(await stored()).toEqual(before)
      expect((await events('plant.created')).length).toBe(createdBefore)
    })

    it('writes nothing when an id repeats within the batch: 409 naming both items', async () => {
      const before = await stored()
      const res = await createBatch(
        batchText([
          { id: 401n, name: 'a' },
          { id: 402n, name: 'b' },
          { id: 401n, name: 'c' },
        ]),
      )
      expect(res.statusCode).toBe(409)
      expect(errorOf(res)).toEqual({
        error: errors.ID_REPEATED.code,
        message: 'Item 2: id 401 appears more than once in the batch (first as item 0).',
      })
      expect(await stored()).toEqual(before)
    })

    it('answers 400 before 409: an invalid item wins over a stored id before it', async () => {
      await createBatch(batchText([{ id: 501n, name: 'stored' }]))
      const res = await createBatch('{"plants":[{"id":501,"name":"x"},{"id":502,"name":1}]}')
      expect(res.statusCode).toBe(400)
      expect(errorOf(res).error).toBe(errors.NAME_INVALID.code)
    })

    it('accepts 1000 plants of the largest size, and refuses 1001 and none', async () => {
      const full = Array.from({ length: 1000 }, (_, i) => largest(10_000n + BigInt(i)))
      const body = `{"plants":[${full.map((p) => plantText(p)).join(',')}]}`
      expect(Buffer.byteLength(body)).toBeGreaterThan(64 * 1024)
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BATCH_BODY_LIMIT)
      const res = await createBatch(body)
      expect(res.statusCode).toBe(200)
      expect((JSON.parse(res.body) as { plants: unknown[] }).plants).toHaveLength(1000)
      expect((await stored()).has('10999')).toBe(true)

      const over = Array.from({ length: 1001 }, (_, i) => ({ id: 20_000n + BigInt(i), name: 'p' }))
      const refused = await createBatch(batchText(over))
      expect(refused.statusCode).toBe(400)
      expect(errorOf(refused).error).toBe(errors.BATCH_PLANTS_INVALID.code)
      expect((await stored()).has('20000')).toBe(false)

      const empty = await createBatch('{"plants":[]}')
      expect(errorOf(empty).error).toBe(errors.BATCH_PLANTS_INVALID.code)
      const absent = await createBatch('{}')
      expect(errorOf(absent).error).toBe(errors.BATCH_PLANTS_INVALID.code)
    })

    it('refuses a body past its limit with 413', async () => {
      const res = await createBatch(`{"plants":[{"id":1,"name":"${'a'.repeat(BATCH_BODY_LIMIT)}"}]}`)
      expect(res.statusCode).toBe(413)
    })

    it('replays the first response to a retry with the same Idempotency-Key, creating nothing more', async () => {
      const body = batchText([
        { id: 601n, name: 'a' },
        { id: 602n, name: 'b' },
      ])
      const first = await createBatch(body, { 'idempotency-key': 'batch-1' })
      expect(first.statusCode).toBe(200)
      const createdAfter = (await events('plant.created')).length
      const retry = await createBatch(body, { 'idempotency-key': 'batch-1' })
      expect([retry.statusCode, retry.body, retry.headers['idempotent-replayed']]).toEqual([
        200,
        first.body,
        'true',
      ])
      expect((await events('plant.created')).length).toBe(createdAfter)
      const other = await createBatch(batchText([{ id: 603n, name: 'c' }]), { 'idempotency-key': 'batch-1' })
      expect(errorOf(other).error).toBe(errors.IDEMPOTENCY_KEY_REUSED.code)
      expect((await stored()).has('603')).toBe(false)
    })

    it('needs plants:write', async () => {
      const reader = await t.token(['plants:read'])
      const res = await createBatch(batchText([{ id: 701n, name: 'a' }]), {}, reader)
      expect(res.statusCode).toBe(403)
      expect(errorOf(res).error).toBe(errors.SCOPE_MISSING.code)
      expect((await stored()).has('701')).toBe(false)
    })

    it('is not taken for a plant id: GET /plants/batch is 405', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/plants/batch',
        headers: { authorization: `Bearer ${t.bearer}` },
      })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow).toBe('POST')
      expect(errorOf(res).error).toBe(errors.METHOD_NOT_ALLOWED.code)
    })
  })

  describe('POST /plants/batch-delete', () => {
    it('deletes every plant named, responding with the ids as exact JSON integers, each with its event', async () => {
      const ids = [9007199254740993n + 1000n, 9223372036854775807n, -9223372036854775808n]
      expect((await createBatch(batchText(ids.map((id) => ({ id, name: 'to go' }))))).statusCode).toBe(200)
      const res = await deleteBatch(`{"ids":[${ids.join(',')}]}`)
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(`{"deleted":[${ids.join(',')}]}`)
      const left = await stored()
      for (const id of ids) expect(left.has(String(id))).toBe(false)
      const deleted = await events('plant.deleted')
      for (const id of ids) expect(deleted.filter((d) => d === String(id))).toHaveLength(1)
    })

    it('deletes nothing when an id is missing: 404 naming it', async () => {
      await createBatch(
        batchText([
          { id: 801n, name: 'a' },
          { id: 802n, name: 'b' },
        ]),
      )
      const res = await deleteBatch('{"ids":[801,899,802]}')
      expect(res.statusCode).toBe(404)
      expect(errorOf(res)).toEqual({
        error: errors.PLANT_NOT_FOUND.code,
        message: 'Item 1: no plant has id 899.',
      })
      const left = await stored()
      expect(left.has('801') && left.has('802')).toBe(true)
    })

    it('passes over missing ids with allowMissing, listing only those deleted', async () => {
      await createBatch(
        batchText([
          { id: 901n, name: 'a' },
          { id: 902n, name: 'b' },
        ]),
      )
      const res = await deleteBatch('{"ids":[902,999,901],"allowMissing":true}')
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe('{"deleted":[902,901]}')
      const bad = await deleteBatch('{"ids":[1],"allowMissing":"yes"}')
      expect(errorOf(bad).error).toBe(errors.ALLOW_MISSING_INVALID.code)
    })

    it('refuses a repeated id with 409, an invalid one with 400 naming its index, and none or 1001', async () => {
      await createBatch(batchText([{ id: 1001n, name: 'a' }]))
      const repeated = await deleteBatch('{"ids":[1001,1001]}')
      expect(repeated.statusCode).toBe(409)
      expect(errorOf(repeated).error).toBe(errors.ID_REPEATED.code)
      const invalid = await deleteBatch('{"ids":[1001,"2"]}')
      expect(errorOf(invalid)).toEqual({
        error: errors.ID_INVALID.code,
        message: 'The field ids[1] must be a JSON integer from -9223372036854775808 to 9223372036854775807.',
      })
      expect(errorOf(await deleteBatch('{"ids":[]}')).error).toBe(errors.BATCH_IDS_INVALID.code)
      const over = `{"ids":[${Array.from({ length: 1001 }, (_, i) => i + 1).join(',')}]}`
      expect(errorOf(await deleteBatch(over)).error).toBe(errors.BATCH_IDS_INVALID.code)
      expect((await stored()).has('1001')).toBe(true)
    })

    it('needs plants:write', async () => {
      await createBatch(batchText([{ id: 1101n, name: 'a' }]))
      const reader = await t.token(['plants:read'])
      const res = await deleteBatch('{"ids":[1101]}', reader)
      expect(res.statusCode).toBe(403)
      expect((await stored()).has('1101')).toBe(true)
    })
  })
})
