import type { PlantListQuery } from '../plants/validate.js'

/**
 * The Link header of a page that has another after it: `path` with the parameters that are set, a
 * list as the parameter repeated.
 */
export function nextLink(
  path: string,
  params: Record<string, string | readonly string[] | undefined>,
): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'string') query.append(name, value)
    else for (const item of value ?? []) query.append(name, item)
  }
  return `<${path}?${query.toString()}>; rel="next"`
}

/**
 * The same listing of plants, from `cursor` on: its own search, tags, sort and count, which the
 * cursor is bound to, and its page size, which a client may change from page to page.
 */
export function nextPageLink(query: PlantListQuery, cursor: string): string {
  return nextLink('/plants', {
    limit: String(query.limit),
    q: query.q,
    tag: query.tag,
    sort: query.sort === 'id' ? undefined : query.sort,
    count: query.count === true ? 'true' : undefined,
    cursor,
  })
}
