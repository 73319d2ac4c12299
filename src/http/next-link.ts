import type { PlantListQuery } from '../plants/validate.js'

/** The Link header of a page that has another after it: `path` with the parameters that are set. */
export function nextLink(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value)
  return `<${path}?${query.toString()}>; rel="next"`
}

/** The same listing of plants, starting after `next`. */
export function nextPageLink(query: PlantListQuery, next: bigint): string {
  return nextLink('/plants', { limit: String(query.limit), after: next.toString(), tag: query.tag })
}
