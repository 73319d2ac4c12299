import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  csvColumns,
  endsInQuotedField,
  lineText,
  plantFromCsvRecord,
  plantFromJsonLine,
  RejectedLine,
  splitCsvRecord,
} from '../../src/plants/import-line.js'
import { makeApp, postPlant, type TestApp } from '../helpers/app.js'
import { sqliteKind } from '../helpers/stores.js'

describe('import lines', () => {
  it.each([
    ['a,b,c', ['a', 'b', 'c']],
    ['"a,b",c', ['a,b', 'c']],
    ['"say ""hi""",x', ['say "hi"', 'x']],
    ['a,,', ['a', '', '']],
    ['""', ['']],
    ['a,"b"', ['a', 'b']],
  ])('splits the CSV record %s', (line, fields) => {
    expect(splitCsvRecord(line)).toEqual(fields)
  })

  it.each(['"open', '"closed"x,y'])('rejects the malformed CSV record %s', (line) => {
    expect(() => splitCsvRecord(line)).toThrow(RejectedLine)
  })

  it.each([
    ['b', true],
    ['b ""c"" d', true],
    ['b"', false],
    ['b",x', false],
    ['b","c', true],
    ['b","c""",d', false],
    ['b"x', false],
  ])('tells whether a quoted field that went on to the line %s is still open at its end', (line, open) => {
    expect(endsInQuotedField(line)).toBe(open)
  })

  it('reads columns by header name in any order, tag optional', () => {
    expect(csvColumns('Name, ID ,tag')).toEqual({ id: 1, name: 0, tag: 2, count: 3 })
    expect(csvColumns('id,name')).toEqual({ id: 0, name: 1, tag: -1, count: 2 })
    expect(() => csvColumns('id,title')).toThrow(/header must name/)
    expect(() => csvColumns('id,name,tag\r1,a,\r2,b,')).toThrow(/lines end in CR alone/)
  })

  it('turns CSV records into plants with exact ids and no empty tag', () => {
    const columns = csvColumns('id,name,tag')
    expect(plantFromCsvRecord('-9223372036854775808,a,', columns)).toEqual({
      id: -9223372036854775808n,
      name: 'a',
    })
    expect(plantFromCsvRecord('9007199254740993,"b, c",t', columns)).toEqual({
      id: 9007199254740993n,
      name: 'b, c',
      tag: 't',
    })
    expect(() => plantFromCsvRecord('1.5,a,', columns)).toThrow(/^40005 /)
    expect(() => plantFromCsvRecord('1', columns)).toThrow(/^40006 /)
    expect(() => plantFromCsvRecord(',a', columns)).toThrow(/^40005 /)
  })

  it('applies the API rules to JSON lines', () => {
    expect(plantFromJsonLine('{"id": 9223372036854775807, "name": "m", "extra": 1}')).toEqual({
      id: 9223372036854775807n,
      name: 'm',
    })
    expect(() => plantFromJsonLine('{"id": 1}')).toThrow(/^40006 /)
    expect(() => plantFromJsonLine('[1]')).toThrow(/^40003 /)
    expect(() => plantFromJsonLine('{"id": 1, "name": "a"')).toThrow(/^40002 /)
  })
})

describe('a rejected JSON line', () => {
  let api: TestApp
  let token: string
  beforeAll(async () => {
    api = await makeApp(sqliteKind)
    token = await api.token()
  })
  afterAll(() => api.close())

  it.each([
    '{"id": 1, "name": "a"',
    'not json',
    '{"id": 1, "name": "a", "name": "b"}',
    '{"id": 1, "name": "a"} trailing',
    '{"id": 1, "name": "a"}{}',
    '[1]',
    'null',
    '{"id": 1}',
    '{"id": "1", "name": "a"}',
  ])('%s gives the code and message POST /plants answers with', async (line) => {
    const answer = await postPlant(api.app, token, line)
    expect(answer.statusCode).toBe(400)
    const { error, message } = answer.json() as { error: number; message: string }
    expect(() => plantFromJsonLine(line)).toThrow(new RejectedLine(`${error} ${message}`))
  })
})

describe('a JSON line larger than the body limit', () => {
  let api: TestApp
  let token: string
  const limit = 100
  beforeAll(async () => {
    api = await makeApp(sqliteKind, { bodyLimit: limit })
    token = await api.token()
  })
  afterAll(() => api.close())

  // Counted in UTF-8 bytes, as a body is: "é" is two.
  const line = (bytes: number) => {
    const head = '{"id": 1, "name": "a", "pad": "'
    const room = bytes - head.length - 2
    return `${head}${'é'.repeat(Math.floor(room / 2))}${'x'.repeat(room % 2)}"}`
  }

  it('is refused with the 413 code and message POST /plants answers with', async () => {
    const tooLarge = line(limit + 1)
    expect(Buffer.byteLength(tooLarge)).toBe(limit + 1)
    const answer = await postPlant(api.app, token, tooLarge)
    expect(answer.statusCode).toBe(413)
    const { error, message } = answer.json() as { error: number; message: string }
    expect(() => plantFromJsonLine(lineText(Buffer.from(tooLarge), limit))).toThrow(
      new RejectedLine(`${error} ${message}`),
    )
  })

  it('is accepted up to the limit, as POST /plants accepts it', async () => {
    const fits = line(limit)
    expect(Buffer.byteLength(fits)).toBe(limit)
    expect((await postPlant(api.app, token, fits)).statusCode).toBe(200)
    expect(plantFromJsonLine(lineText(Buffer.from(fits), limit))).toEqual({ id: 1n, name: 'a' })
  })
})

describe('an import line as bytes', () => {
  it('is its UTF-8 text, refused as POST refuses a body: too long with 41301, not UTF-8 with 40002', () => {
    expect(lineText(Buffer.from('{"id":1}'), 8)).toBe('{"id":1}')
    expect(() => lineText(Buffer.from('{"id":1}'), 7)).toThrow(
      new RejectedLine('41301 The request body is too large.'),
    )
    expect(() => lineText(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(
      new RejectedLine('40002 The request body is not valid UTF-8.'),
    )
  })
})
