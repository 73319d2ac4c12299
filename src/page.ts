/**
 * A page of `limit` rows out of `rows`, read one past the page: that one says whether another page
 * follows, so the last page has no link.
 */
export function pageOf<T>(
  rows: T[],
  limit: number,
  cursor: (row: T) => string,
): { rows: T[]; next?: string } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { rows: page, next: rows.length > limit && last !== undefined ? cursor(last) : undefined }
}
