import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { exportPlants } from '../../src/cli/export.js'
import { importPlants } from '../../src/cli/import.js'
import { plantJson } from '../../src/plants/events.js'
import { INT64_MAX, INT64_MIN } from '../../src/plants/int64.js'
import type { NewPlant } from '../../src/plants/model.js'
import { errorOf, makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { type StoreKind, storeKinds, tempDir } from '../helpers/stores.js'

// Import and export as a round trip, over generated plants: every valid plant survives export, import
// and export again byte for byte, in JSON Lines and in CSV as any RFC 4180 writer quotes it, and a
// line is accepted or refused by import exactly as POST /plants would. Each run opens fresh databases,
// so the run counts are small (fewer still on PostgreSQL, where a database is made per run).
const runs = (kind: StoreKind) => ({ numRuns: kind.name === 'sqlite' ? 60 : 8 })

const TWO_53 = 2n ** 53n
const int64 = fc.oneof(
  fc.constantFrom(INT64_MIN, INT64_MAX, INT64_MIN + 1n, INT64_MAX - 1n, 0n, -1n, 1n),
  fc.constantFrom(TWO_53 - 1n, TWO_53, TWO_53 + 1n, -TWO_53 - 1n, -TWO_53, -TWO_53 + 1n),
  fc.bigInt(INT64_MIN, INT64_MAX),
)

/** Text the API accepts: no C0 controls, no lone surrogates, 1 to max code points. */
const text = (max: number) =>
  fc
    .string({
      unit: fc.oneof(
        fc.constantFrom(
          'a',
          'é',
          ' ',
          '"',
          "'",
          ',',
          '\\',
          '🌿',
          '中',
          'e\u0301',
          '\u007f',
          '\u2028',
          '\uFEFF',
        ),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
      ),
      minLength: 1,
      maxLength: max,
    })
    .filter((s) => [...s].length <= max && [...s].every((c) => (c.codePointAt(0) as number) >= 0x20))

const plant: fc.Arbitrary<NewPlant> = fc
  .record({ id: int64, name: text(200), tag: fc.option(text(100), { nil: undefined }) })
  .map(({ id, name, tag }) => (tag === undefined ? { id, name } : { id, name, tag }))

const plants = fc.uniqueArray(plant, { selector: (p) => p.id, maxLength: 6 })

/** The export of `plants`: one line each in id order. */
function exported(list: NewPlant[]): string {
  return [...list]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => `${plantJson(p)}\n`)
    .join('')
}

/** A field as RFC 4180 writes it: quoted when it holds a comma, a quote, CR or LF (or when asked). */
function csvField(value: string, quoteAnyway: boolean): string {
  return quoteAnyway || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

describe.each(storeKinds)('import and export round trips on $name', (kind) => {
  const printed: string[] = []
  const progress: string[] = []
  afterEach(() => {
    vi.restoreAllMocks()
  })
  const capture = () => {
    printed.length = 0
    progress.length = 0
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk))
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      progress.push(String(chunk))
      return true
    })
  }
  const file = (name: string, bytes: string) => {
    const path = join(tempDir(), name)
    writeFileSync(path, bytes)
    return path
  }
  const exportOf = async (databaseUrl: string) => {
    const output = join(tempDir(), 'out.jsonl')
    await exportPlants({ databaseUrl, output })
    return readFileSync(output, 'utf8')
  }
  /** The import's summary counts, from its last progress line. */
  const summary = () => {
    const last = progress.join('').trim().split('\n').at(-1) as string
    const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(last)?.[1])
    return { created: count('created'), unchanged: count('unchanged'), rejected: count('rejected') }
  }

  it('exports, imports into a fresh database and exports again byte for byte; a second import changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(plants, fc.boolean(), async (list, crlf) => {
        capture()
        const source = await kind.freshUrl()
        const lines = list.map((p) => plantJson(p)).join(crlf ? '\r\n' : '\n')
        expect(await importPlants(file('in.jsonl', lines), { databaseUrl: source })).toBe(true)
        const first = await exportOf(source)
        expect(first).toBe(exported(list))
        const copy = await kind.freshUrl()
        const path = file('copy.jsonl', first)
        expect(await importPlants(path, { databaseUrl: copy })).toBe(true)
        expect(await exportOf(copy)).toBe(first)
        expect(await importPlants(path, { databaseUrl: copy })).toBe(true)
        expect(summary()).toMatchObject({ created: 0, unchanged: list.length, rejected: 0 })
        expect(printed.join('')).toBe('')
      }),
      runs(kind),
    )
  })

  it('stores the first of the lines that share an id, whatever the batch size, and rejects the others that differ', async () => {
    const small = fc.record({
      id: fc.bigInt(1n, 4n),
      name: fc.constantFrom('a', 'b'),
      tag: fc.constantFrom(undefined, 'x'),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(small, { maxLength: 8 }),
        fc.integer({ min: 1, max: 3 }),
        async (raw, size) => {
          capture()
          const list: NewPlant[] = raw.map(({ id, name, tag }) =>
            tag === undefined ? { id, name } : { id, name, tag },
          )
          const databaseUrl = await kind.freshUrl()
          const path = file('dup.jsonl', list.map((p) => `${plantJson(p)}\n`).join(''))
          const first = new Map<bigint, NewPlant>()
          const expected: string[] = []
          list.forEach((p, i) => {
            const seen = first.get(p.id)
            if (seen === undefined) first.set(p.id, p)
            else if (plantJson(seen) !== plantJson(p))
              expected.push(`line ${i + 1}: a different plant with id ${p.id} already exists\n`)
          })
          expect(await importPlants(path, { databaseUrl, batchSize: String(size) })).toBe(
            expected.length === 0,
          )
          expect(printed.join('')).toBe(expected.join(''))
          expect(await exportOf(databaseUrl)).toBe(exported([...first.values()]))
        },
      ),
      runs(kind),
    )
  })

  it('imports the same plants from CSV as an RFC 4180 writer writes them', async () => {
    await fc.assert(
      fc.asyncProperty(
        plants,
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.boolean(),
        async (list, eol, bom, quoteAll) => {
          capture()
          const rows = list.map((p) =>
            [String(p.id), p.name, p.tag ?? ''].map((f) => csvField(f, quoteAll)).join(','),
          )
          const csv = `${bom ? '\uFEFF' : ''}${['id,name,tag', ...rows].join(eol)}${eol}`
          const databaseUrl = await kind.freshUrl()
          const path = file('in.csv', csv)
          expect(await importPlants(path, { databaseUrl })).toBe(true)
          expect(printed.join('')).toBe('')
          expect(await exportOf(databaseUrl)).toBe(exported(list))
          expect(await importPlants(path, { databaseUrl })).toBe(true)
          expect(summary()).toMatchObject({ created: 0, unchanged: list.length, rejected: 0 })
        },
      ),
      runs(kind),
    )
  })
})

/** Anything a field might hold: valid text, control characters, lone surrogates, nothing at all. */
const anyText = fc.oneof(
  text(5),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom('', ' ', '\t', '\u0000', '\ud800', 'a\udc00', 'x'.repeat(201), 'a\nb', 'a\r\nb', '"'),
)
/** Text as a UTF-8 file holds it: a lone surrogate has no encoding and is written as U+FFFD. */
const asWritten = (s: string) => Buffer.from(s, 'utf8').toString('utf8')
const anyId = fc.oneof(
  int64.map(String),
  fc.constantFrom('', '-0', '1.5', '1e3', '01', ' 1', '9223372036854775808', '-9223372036854775809', 'x'),
)

describe('import refuses what POST /plants refuses, with the same code', () => {
  let t: TestApp
  let token: string
  let next = 0n
  beforeAll(async () => {
    t = await makeApp(storeKinds[0] as StoreKind)
    token = await t.token()
  })
  afterAll(() => t.close())
  afterEach(() => {
    vi.restoreAllMocks()
  })

  /** The import's report for one CSV record, or '' when it was stored. */
  const importCsv = async (record: string) => {
    const path = join(tempDir(), 'one.csv')
    writeFileSync(path, `id,name,tag\n${record}\n`)
    const printed: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      printed.push(String(chunk))
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      await importPlants(path, { databaseUrl: t.url })
    } finally {
      vi.restoreAllMocks()
    }
    return printed.join('')
  }

  it('a CSV record is stored exactly when the same plant can be created, else refused with its code', async () => {
    await fc.assert(
      fc.asyncProperty(
        anyText.map(asWritten),
        fc.option(anyText.map(asWritten), { nil: undefined }),
        async (name, tag) => {
          // A fresh id each run, so that a refusal is never a conflict with an earlier one.
          const id = 1_000_000n + next++
          const record = [String(id), name, tag ?? ''].map((f) => csvField(f, false)).join(',')
          const report = await importCsv(record)
          const body: Record<string, unknown> = { id, name }
          if (tag !== undefined && tag !== '') body.tag = tag
          const res = await postPlant(t.app, token, plantJson(body as unknown as NewPlant))
          if (report === '') {
            // Stored by the import, so the API sees it as a conflict of the identical plant.
            const read = await t.app.inject({
              url: `/plants/${id}`,
              headers: { authorization: `Bearer ${token}` },
            })
            expect(read.body).toBe(plantJson(body as unknown as NewPlant))
            expect(res.statusCode).toBe(409)
          } else {
            expect(res.statusCode, `${record} → ${report}`).toBe(400)
            expect(report).toBe(`line 2: ${errorOf(res).error} ${errorOf(res).message}\n`)
          }
        },
      ),
      { numRuns: 100 },
    )
  })

  it('a CSV id is refused exactly as the same number in a body', async () => {
    await fc.assert(
      fc.asyncProperty(anyId, async (idText) => {
        const report = await importCsv(`${csvField(idText, false)},n`)
        const parsed = /^-?(0|[1-9]\d*)$/.test(idText) ? idText : JSON.stringify(idText)
        const res = await postPlant(t.app, token, `{"id":${parsed},"name":"n"}`)
        if (report === '') expect(res.statusCode).toBe(409)
        else expect(report).toBe(`line 2: ${errorOf(res).error} ${errorOf(res).message}\n`)
      }),
      { numRuns: 60 },
    )
  })
})
