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

/**
 * The entity tags of an If-Match / If-None-Match header (RFC 9110 §13.1): '*' or a list.
 * Weak tags keep their `W/` prefix, so only the weak comparison of If-None-Match can match them.
 */
export function parseEntityTags(header: string): '*' | string[] {
  if (header.trim() === '*') return '*'
  return header.match(/(?:W\/)?"[^"]*"/g) ?? []
}

/** If-Match uses the strong comparison: a weak tag never matches. */
export function matchesStrong(tags: '*' | string[], etag: string): boolean {
  return tags === '*' || tags.includes(etag)
}

/** If-None-Match uses the weak comparison: `W/"x"` and `"x"` are the same tag there. */
export function matchesWeak(tags: '*' | string[], etag: string): boolean {
  return tags === '*' || tags.some((tag) => tag.replace(/^W\//, '') === etag)
}
