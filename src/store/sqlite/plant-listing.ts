// The SQL of a plant listing and of its count, built for the query's shape (its order, whether it has a
// position, its search text, its number of tags) and prepared once per shape.
import type { Database, Statement } from 'better-sqlite3'
import { ID_ORDER, integerKey, searchText } from '../listing.js'
import type { ListedPlant, ListQuery, PlantFilter, SortField } from '../types.js'
import { type PlantRow, toPlant } from './plant-row.js'

const COLUMN: Record<SortField, string> = {
  id: 'id',
  name: 'name',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
}

/** Prepared statements kept at most; more shapes (many tags at once) are prepared again when met. */
const KEPT_STATEMENTS = 200

type Params = Record<string, unknown>

interface ListedRow extends PlantRow {
  /** The sort key for an order other than id: the name, or the time as an integer (ms). */
  key?: string | bigint
}

/** An FTS5 phrase: the text as one literal string, its `"` doubled; the trigram tokenizer matches it as a substring. */
function phrase(text: string): string {
  return `"${text.replaceAll('"', '""')}"`
}

/**
 * The conditions a plant must meet to pass the filter, with their parameters set in `params`. Tags
 * are any of the given; the text is a substring of the folded name, found through the trigram index
 * when it holds a trigram, by instr() over each plant otherwise.
 */
function filterConditions(filter: PlantFilter, params: Params): string[] {
  const conditions: string[] = []
  const tags = filter.tags ?? []
  if (tags.length > 0) {
    tags.forEach((tag, i) => {
      params[`t${i}`] = tag
    })
    conditions.push(
      tags.length === 1 ? 'p.tag = @t0' : `p.tag IN (${tags.map((_, i) => `@t${i}`).join(', ')})`,
    )
  }
  if (filter.text !== undefined) {
    const text = searchText(filter.text)
    if (text.trigrams) {
      params.match = phrase(text.folded)
      conditions.push('p.id IN (SELECT rowid FROM plant_names WHERE plant_names MATCH @match)')
    } else {
      params.text = text.folded
      conditions.push('instr(p.name_folded, @text) > 0')
    }
  }
  return conditions
}

/** The listing's SQL, its parameters set in `params`. */
function listSql(query: ListQuery, params: Params): string {
  const order = query.order ?? ID_ORDER
  const byId = order.field === 'id'
  const column = COLUMN[order.field]
  const dir = order.descending ? ' DESC' : ''
  const after = order.descending ? '<' : '>'
  const columns = byId ? 'p.id, p.name, p.tag' : `p.id, p.name, p.tag, p.${column} AS key`
  const orderBy = byId ? `p.id${dir}` : `p.${column}${dir}, p.id${dir}`
  params.limit = query.limit
  const position: string[] = []
  if (query.after) {
    params.afterId = query.after.id
    if (byId) position.push(`p.id ${after} @afterId`)
    else {
      params.afterKey = order.field === 'name' ? query.after.key : integerKey(query.after.key)
      position.push(`(p.${column}, p.id) ${after} (@afterKey, @afterId)`)
    }
  }
  const tags = query.tags ?? []
  const text = query.text === undefined ? undefined : searchText(query.text)

  if (text?.trigrams && byId) {
    // The index gives its matches in rowid order from the position on, so the page stops at its
    // limit instead of reading every match first.
    params.match = phrase(text.folded)
    const conditions = ['plant_names MATCH @match']
    if (query.after) conditions.push(`plant_names.rowid ${after} @afterId`)
    const filter = filterConditions({ tags }, params)
    return `SELECT ${columns} FROM plant_names CROSS JOIN plants p ON p.id = plant_names.rowid
      WHERE ${[...conditions, ...filter].join(' AND ')} ORDER BY plant_names.rowid${dir} LIMIT @limit`
  }

  if (tags.length > 1 && text === undefined) {
    // One page per tag, each a descent of the (tag, id) index (or of the order's own), merged: the
    // page costs a descent per tag at any depth, where `tag IN (…)` would read every plant of the
    // tags from the position on to sort them.
    const pages = tags.map((tag, i) => {
      params[`t${i}`] = tag
      const where = [`p.tag = @t${i}`, ...position].join(' AND ')
      return `SELECT * FROM (SELECT ${columns} FROM plants p WHERE ${where} ORDER BY ${orderBy} LIMIT @limit)`
    })
    const merged = byId ? `id${dir}` : `key${dir}, id${dir}`
    return `${pages.join(' UNION ALL ')} ORDER BY ${merged} LIMIT @limit`
  }

  const conditions = [...filterConditions(query, params), ...position]
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  return `SELECT ${columns} FROM plants p ${where} ORDER BY ${orderBy} LIMIT @limit`
}

/** The count's SQL, its parameters set in `params`. */
function countSql(filter: PlantFilter, params: Params): string {
  const text = filter.text === undefined ? undefined : searchText(filter.text)
  if (text?.trigrams && (filter.tags ?? []).length === 0) {
    // The index alone knows the matches; the plants need not be read.
    params.match = phrase(text.folded)
    return 'SELECT count(*) FROM plant_names WHERE plant_names MATCH @match'
  }
  const conditions = filterConditions(filter, params)
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  return `SELECT count(*) FROM plants p ${where}`
}

/** Lists and counts plants on one connection, each query shape prepared once. */
export class PlantListing {
  private readonly statements = new Map<string, Statement>()

  constructor(private readonly db: Database) {}

  list(query: ListQuery): ListedPlant[] {
    const params: Params = {}
    const rows = this.prepared(listSql(query, params)).all(params) as ListedRow[]
    return rows.map((row) =>
      row.key === undefined ? { plant: toPlant(row) } : { plant: toPlant(row), key: String(row.key) },
    )
  }

  count(filter: PlantFilter): number {
    const params: Params = {}
    return Number(this.prepared(countSql(filter, params)).pluck().get(params))
  }

  private prepared(sql: string): Statement {
    let statement = this.statements.get(sql)
    if (statement === undefined) {
      if (this.statements.size >= KEPT_STATEMENTS) this.statements.clear()
      statement = this.db.prepare(sql).safeIntegers(true)
      this.statements.set(sql, statement)
    }
    return statement
  }
}
