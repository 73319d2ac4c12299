import type { Database, Statement } from 'better-sqlite3'
import type { JsonPage } from '../types.js'

/** At most this many pages are kept; the oldest goes first. */
const MAX_PAGES = 16

/**
 * At most this many characters of JSON in all (about 1 MB): a page may hold 1,000 plants with long
 * names, and a larger one is never kept.
 */
const MAX_CHARS = 1 << 20

/**
 * Listing pages read on one connection, kept while the database is unchanged: a page asked for again
 * (the first page, which clients poll) is answered without reading 101 rows and writing their JSON
 * again, which was about half of a listing's time. Whether anything changed is what SQLite itself
 * tells each connection, checked on every read: `data_version` moves when another connection (the
 * batch writer's, another worker's, another process's) commits, and `total_changes()` when this one
 * writes. Any change to any table drops every page; a commit that lands between that check and a
 * page's read moves `data_version` again, so the page is never served under the state it missed.
 */
export class ListingCache {
  private readonly stamp: Statement
  private version = -1
  private changes = -1
  private readonly pages = new Map<string, JsonPage>()
  private chars = 0

  constructor(
    db: Database,
    private readonly maxPages = MAX_PAGES,
    private readonly maxChars = MAX_CHARS,
  ) {
    this.stamp = db
      .prepare('SELECT (SELECT data_version FROM pragma_data_version), total_changes()')
      .raw()
      .safeIntegers(false)
  }

  /** The page under `key` as `read` wrote it while the database was as it is now. */
  page(key: string, read: () => JsonPage): JsonPage {
    const [version, changes] = this.stamp.get() as [number, number]
    if (version !== this.version || changes !== this.changes) {
      this.version = version
      this.changes = changes
      this.pages.clear()
      this.chars = 0
    }
    const kept = this.pages.get(key)
    if (kept !== undefined) return kept
    const page = read()
    if (page.json.length <= this.maxChars) this.keep(key, page)
    return page
  }

  private keep(key: string, page: JsonPage): void {
    for (const [oldest, dropped] of this.pages) {
      if (this.pages.size < this.maxPages && this.chars + page.json.length <= this.maxChars) break
      this.pages.delete(oldest)
      this.chars -= dropped.json.length
    }
    this.pages.set(key, page)
    this.chars += page.json.length
  }
}
