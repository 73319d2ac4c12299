import type { PlantListQuery } from '../plants/validate.js'

/** The Link header of a page that has another after it: the same listing, starting after `next`. */
export function nextPageLink(query: PlantListQuery, next: bigint): string {
  const params = new URLSearchParams({ limit: String(query.limit), after: next.toString() })
  if (query.tag !== undefined) params.set('tag', query.tag)
  return `</plants?${params.toString()}>; rel="next"`
}
