/**
 * Each connection's page cache: `PRAGMA cache_size` in KiB when negative. 2 MiB is SQLite's own
 * default; better-sqlite3 builds SQLite with 16 MiB, and under creates with random ids every
 * connection fills whatever it is given, which made the page caches the largest part of the service's
 * memory under load (~16 MB more resident at its peak). The interior B-tree pages every lookup walks
 * fit in 2 MiB many times over even with millions of plants; a leaf page not cached is read from the
 * OS's file cache, and a 16 MiB cache would hold only a quarter of a million plants' leaves anyway.
 */
export const PAGE_CACHE_PRAGMA = 'cache_size = -2048'
