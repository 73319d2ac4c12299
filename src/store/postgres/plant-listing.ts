// The SQL of a plant listing and of its count, with its parameters, for the query's shape.
import { ID_ORDER, integerKey, searchText } from '../listing.js'
import type { ListQuery, PlantFilter, SortField } from '../types.js'

/** A statement and its parameters, as pg's query() takes them. */
export interface Sql {
  text: string
  values: unknown[]
}

/** What a listing orders by: names by code point (COLLATE "C"), whatever the database's collation. */
const SORT: Record<SortField, string> = {
  id: 'id',
  name: 'name COLLATE "C"',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

/** The column an order's key is stored in. */
const COLUMN: Record<SortField, string> = {
  id: 'id',
  name: 'name',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

/**
 * A listed plant's key as text: the name, or the instant as an integer count of microseconds since
 * the epoch, exactly as stored (extract() gives a numeric, never a float).
 */
function keyOf(field: SortField, column: string): string {
  return field === 'name' ? column : `((extract(epoch FROM ${column}) * 1000000)::bigint)::text`
}

/**
 * The instant of a key of microseconds since the epoch. interval * bigint multiplies in double
 * precision, exact for every count below 2^53 microseconds (within 285 years of 1970, where the
 * stored times are).
 */
function instant(param: string): string {
  return `('epoch'::timestamptz + ${param}::bigint * interval '1 microsecond')`
}

/** `LIKE` pattern of a literal substring: its `\`, `%` and `_` escaped (ESCAPE '\'). */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`
}

class Params {
  readonly values: unknown[] = []
  add(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/** The conditions of the text filter (the tags are the caller's), unqualified. */
function textConditions(filter: PlantFilter, params: Params): string[] {
  if (filter.text === undefined) return []
  // A text shorter than a trigram is matched all the same, by a scan the index cannot narrow.
  return [`name_folded LIKE ${params.add(containing(searchText(filter.text).folded))} ESCAPE '\\'`]
}

/** The listing's statement: a page in the query's order, strictly after its position. */
export function listSql(query: ListQuery): Sql {
  const params = new Params()
  const order = query.order ?? ID_ORDER
  const byId = order.field === 'id'
  const dir = order.descending ? ' DESC' : ''
  const after = order.descending ? '<' : '>'
  const column = COLUMN[order.field]
  const conditions = textConditions(query, params)
  if (query.after) {
    const id = `${params.add(query.after.id.toString())}::bigint`
    if (byId) conditions.push(`id ${after} ${id}`)
    else if (order.field === 'name')
      conditions.push(`(name COLLATE "C", id) ${after} (${params.add(query.after.key)}::text, ${id})`)
    else
      conditions.push(
        `(${column}, id) ${after} (${instant(params.add(integerKey(query.after.key).toString()))}, ${id})`,
      )
  }
  const limit = params.add(query.limit)
  const tags = query.tags ?? []
  const keyColumn = byId ? '' : `, ${keyOf(order.field, column)} AS key`
  // Qualified: a bare `id` in ORDER BY would name the output column, the id as text.
  const orderBy = (prefix: string) =>
    byId ? `${prefix}id${dir}` : `${prefix}${SORT[order.field]}${dir}, ${prefix}id${dir}`

  if (tags.length > 1) {
    // One page per tag, each a descent of the (tag, id) index (or of the order's own), merged: the
    // page costs a descent per tag at any depth, where `tag = ANY(…)` would read every plant of the
    // tags from the position on to sort them.
    const inner = ['plants.tag = t.tag', ...conditions].join(' AND ')
    return {
      text: `SELECT p.id::text AS id, p.name, p.tag${byId ? '' : `, ${keyOf(order.field, `p.${column}`)} AS key`}
        FROM unnest(${params.add(tags)}::text[]) AS t(tag) CROSS JOIN LATERAL (
          SELECT plants.id, plants.name, plants.tag, plants.created_at, plants.updated_at FROM plants
          WHERE ${inner} ORDER BY ${orderBy('plants.')} LIMIT ${limit}
        ) p
        ORDER BY ${orderBy('p.')} LIMIT ${limit}`,
      values: params.values,
    }
  }
  if (tags.length === 1) conditions.push(`tag = ${params.add(tags[0])}`)
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  return {
    text: `SELECT id::text AS id, name, tag${keyColumn} FROM plants ${where} ORDER BY ${orderBy('plants.')} LIMIT ${limit}`,
    values: params.values,
  }
}

/** The count's statement: every plant the filter keeps. */
export function countSql(filter: PlantFilter): Sql {
  const params = new Params()
  const conditions = textConditions(filter, params)
  const tags = filter.tags ?? []
  if (tags.length === 1) conditions.push(`tag = ${params.add(tags[0])}`)
  else if (tags.length > 1) conditions.push(`tag = ANY(${params.add(tags)}::text[])`)
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  return { text: `SELECT count(*)::text AS n FROM plants ${where}`, values: params.values }
}
