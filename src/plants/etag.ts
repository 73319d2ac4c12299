import { hash } from 'node:crypto'
import { plantJson } from './events.js'
import type { Plant } from './model.js'

/**
 * A strong ETag for a plant at a version. The version alone would repeat after a delete and a
 * re-create under the same id; the content digest keeps two different plants from sharing a tag.
 */
export function etagOf(plant: Plant, version: number): string {
  return etagOfJson(plantJson(plant), version)
}

/** The same, from the plant's JSON text (plantJson) when the caller has it already. */
export function etagOfJson(json: string, version: number): string {
  const digest = hash('sha256', json, 'base64url').slice(0, 16)
  return `"${version}-${digest}"`
}

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text (RFC 9110 §8.8.3).
const ENTITY_TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"'
/**
 * A comma-separated list of entity tags, empty elements and optional whitespace allowed (§5.6.1).
 * Each run of whitespace has one place to go (after a tag, then a comma or the end): no backtracking.
 */
const ENTITY_TAG_LIST = new RegExp(`^[ \\t]*(?:${ENTITY_TAG}[ \\t]*)?(?:,[ \\t]*(?:${ENTITY_TAG}[ \\t]*)?)*$`)
const ENTITY_TAGS = new RegExp(ENTITY_TAG, 'g')
// `*` with optional whitespace only: trim() would also drop a no-break space (obs-text to Node), and
// take `\xa0*`, which is neither `*` nor a list, for `*`.
const ANY = /^[ \t]*\*[ \t]*$/

/**
 * The entity tags of an If-Match / If-None-Match header (RFC 9110 §13.1): '*' or a list.
 * Weak tags keep their `W/` prefix, so only the weak comparison of If-None-Match can match them.
 * A header that is not such a list (`junk"1-abc"`, two tags without a comma) names no tag: it then
 * matches nothing, rather than whatever quoted text could be picked out of it.
 */
export function parseEntityTags(header: string): '*' | string[] {
  if (ANY.test(header)) return '*'
  if (!ENTITY_TAG_LIST.test(header)) return []
  return header.match(ENTITY_TAGS) ?? []
}

/** If-Match uses the strong comparison: a weak tag never matches. */
export function matchesStrong(tags: '*' | string[], etag: string): boolean {
  return tags === '*' || tags.includes(etag)
}

/** If-None-Match uses the weak comparison: `W/"x"` and `"x"` are the same tag there. */
export function matchesWeak(tags: '*' | string[], etag: string): boolean {
  return tags === '*' || tags.some((tag) => tag.replace(/^W\//, '') === etag)
}
