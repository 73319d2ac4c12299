/**
 * The query of a `Link: <…>; rel="next"` header's target: what to ask for the next page with.
 * Undefined on the last page, which has no such link. The target is read relative to any origin,
 * for only its query matters.
 */
export function nextPageQuery(response: Response): URLSearchParams | undefined {
  const link = response.headers.get('link')
  const target = link && /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1]
  return target ? new URL(target, 'http://link.invalid').searchParams : undefined
}
