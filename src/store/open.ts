import { openSqlite } from './sqlite/index.js'
import type { Store } from './types.js'

export type DatabaseLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string }

/** Reads a DATABASE_URL: `sqlite:PATH`, `sqlite::memory:` or `postgres://…`; null when it is none. */
export function parseDatabaseUrl(url: string): DatabaseLocation | null {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')
    return path === '' ? null : { kind: 'sqlite', path }
  }
  if (/^postgres(ql)?:\/\/./.test(url)) return { kind: 'postgres', url }
  return null
}

export interface OpenOptions {
  busyTimeoutMs?: number
  /** The store will serve requests: get ready for writes now rather than on the first one. */
  serving?: boolean
}

/** Opens the store the location names and brings its schema up to date. */
export async function openStore(location: DatabaseLocation, options: OpenOptions = {}): Promise<Store> {
  if (location.kind === 'sqlite') {
    return openSqlite({ path: location.path, busyTimeoutMs: options.busyTimeoutMs, serving: options.serving })
  }
  const { openPostgres } = await import('./postgres/index.js')
  return openPostgres({ url: location.url })
}
