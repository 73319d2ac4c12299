import { objectBody } from '../body-shape.js'
import { AppError, errors } from '../errors.js'
import { checkOf, refusalsFor } from '../validation-errors.js'
import { parseInt64 } from './int64.js'
import { parseJsonDocument, utf8Text } from './json.js'
import type { NewPlant } from './model.js'
import { NewPlant as newPlantValidator } from './shape-validators.js'

/**
 * POST /plants's own check of its body: its schema, through the validator generated from it at build
 * time, so that an import loads neither TypeBox nor Ajv's compiler.
 */
const newPlantCheck = objectBody(checkOf(newPlantValidator, refusalsFor('body', 'NewPlant')))

/** The plant a body that POST /plants would accept stands for, cleaned as POST cleans it. */
function validNewPlant(body: unknown): NewPlant {
  const refusal = newPlantCheck(body)
  if (refusal !== undefined) throw refusal
  return body as NewPlant
}

export type ImportFormat = 'jsonl' | 'csv'

/** A line that cannot become a plant, with the reason in the words the HTTP API would use. */
export class RejectedLine extends Error {
  override name = 'RejectedLine'
}

/**
 * A CSV line that ends inside a quoted field: RFC 4180 lets a quoted field hold a line break, so the
 * record goes on on the next line.
 */
export class UnterminatedField extends RejectedLine {
  override name = 'UnterminatedField'
  constructor() {
    super('unterminated quoted field')
  }
}

/**
 * The same rules as POST /plants: a line is accepted exactly when the API would accept it as a body.
 * Its size is a property of its bytes, checked as they are read (lineText).
 */
export function plantFromJsonLine(line: string): NewPlant {
  return checked(() => validNewPlant(parseJsonDocument(line)))
}

/**
 * A line's text, held to POST's rules for a body's bytes: more than `bodyLimit` bytes is 41301 (the
 * API reads no body past its limit), bytes that are not UTF-8 are 40002 (rather than text with
 * U+FFFD in their place, which would store what the API refuses).
 */
export function lineText(bytes: Buffer, bodyLimit = Number.POSITIVE_INFINITY): string {
  return checked(() => {
    if (bytes.length > bodyLimit) throw new AppError(errors.BODY_TOO_LARGE)
    return utf8Text(bytes)
  })
}

/** What `read` gives; a RejectedLine with the code and message POST /plants would answer. */
function checked<T>(read: () => T): T {
  try {
    return read()
  } catch (error) {
    if (error instanceof AppError) throw new RejectedLine(`${error.entry.code} ${error.message}`)
    throw error
  }
}

/** Splits one RFC 4180 record: fields separated by commas, optionally quoted with "" for a quote. */
export function splitCsvRecord(line: string): string[] {
  const fields: string[] = []
  let i = 0
  for (;;) {
    if (line[i] === '"') {
      let field = ''
      i++
      for (;;) {
        const end = line.indexOf('"', i)
        if (end === -1) throw new UnterminatedField()
        field += line.slice(i, end)
        i = end + 1
        if (line[i] !== '"') break
        field += '"'
        i++
      }
      fields.push(field)
      if (i === line.length) return fields
      if (line[i] !== ',') throw new RejectedLine('text after a closing quote')
      i++
    } else {
      const end = line.indexOf(',', i)
      if (end === -1) {
        fields.push(line.slice(i))
        return fields
      }
      fields.push(line.slice(i, end))
      i = end + 1
    }
  }
}

/**
 * Whether a record that entered this line inside a quoted field is still inside one at its end. Only
 * the new line is read, so that a quote left open costs time in proportion to the lines it takes in.
 */
export function endsInQuotedField(line: string): boolean {
  for (let i = 0; ; ) {
    const end = line.indexOf('"', i)
    if (end === -1) return true
    if (line[end + 1] === '"') {
      i = end + 2
      continue
    }
    // The field closes here. What follows is the record's other fields, or text that makes it wrong.
    if (line[end + 1] !== ',') return false
    try {
      splitCsvRecord(line.slice(end + 2))
      return false
    } catch (error) {
      return error instanceof UnterminatedField
    }
  }
}

/** Column positions read from a CSV header line such as `id,name,tag` (tag optional, any order). */
export interface CsvColumns {
  id: number
  name: number
  tag: number
  /** How many columns the header names; a record may not have more. */
  count: number
}

/**
 * Lines are split at LF (a CR before it is dropped). A CR left in the header is a file whose lines end
 * in CR alone: read as one line, its records would all be taken for the header's columns and the
 * import would end with nothing read and nothing said.
 */
export const CR_ALONE =
  'the header holds a carriage return that ends no line: the file’s lines end in CR alone; convert them to LF or CRLF'

export function csvColumns(header: string): CsvColumns {
  if (header.includes('\r')) throw new RejectedLine(CR_ALONE)
  const names = splitCsvRecord(header).map((h) => h.trim().toLowerCase())
  const id = names.indexOf('id')
  const name = names.indexOf('name')
  if (id === -1 || name === -1)
    throw new RejectedLine('the header must name the columns id, name and (optionally) tag')
  return { id, name, tag: names.indexOf('tag'), count: names.length }
}

/**
 * A CSV record as a plant. CSV has no types, so the id is the integer its text spells (exactly, as
 * int64) and an empty tag means no tag.
 */
export function plantFromCsvRecord(line: string, columns: CsvColumns): NewPlant {
  const fields = splitCsvRecord(line)
  // A field the header names no column for is most often a comma left unquoted in a name, which
  // shifts the fields after it: read anyway, `1,Monstera, deliciosa,aroid` would be stored as the
  // plant "Monstera" tagged " deliciosa".
  if (fields.length > columns.count) {
    throw new RejectedLine(
      `${fields.length} fields where the header names ${columns.count} columns (quote a field that holds a comma)`,
    )
  }
  const idText = fields[columns.id]
  const tag = columns.tag === -1 ? undefined : fields[columns.tag]
  const record: Record<string, unknown> = {
    id: idText === undefined ? undefined : (parseInt64(idText) ?? idText),
    name: fields[columns.name],
  }
  if (tag !== undefined && tag !== '') record.tag = tag
  return checked(() => validNewPlant(record))
}
