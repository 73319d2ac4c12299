/**
 * The query of a `Link: <…>; rel="next"` header's target: what to ask for the next page with.
 * Undefined on the last page, which has no such link. Only the target's query matters, so it is read
 * without resolving the target against an origin.
 */
export function nextPageQuery(response: Response): URLSearchParams | undefined {
  const link = response.headers.get('link')
  const target = link && /<([^>]*)>\s*;\s*rel="?next"?/.exec(link)?.[1]
  return target ? new URLSearchParams(/\?([^#]*)/.exec(target)?.[1] ?? '') : undefined
}
