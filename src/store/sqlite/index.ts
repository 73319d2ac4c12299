import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import type { Store } from '../types.js'
import { SqliteEventStore } from './events.js'
import { SqliteIdempotencyStore } from './idempotency.js'
import { migrate } from './migrate.js'
import { SqlitePlantStore } from './plants.js'
import { SqliteTokenStore } from './tokens.js'
import { type BatchSink, inlineSink, threadSink } from './writer.js'

export interface SqliteOptions {
  /** A file path, or ':memory:' for a throwaway store. */
  path: string
  /** How long a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number
  /** Start the writer thread at once (serve), instead of on the first create (CLI commands never need it). */
  serving?: boolean
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly plants: SqlitePlantStore
  readonly tokens: SqliteTokenStore
  readonly events: SqliteEventStore
  private readonly sink: BatchSink
  readonly idempotency: SqliteIdempotencyStore

  constructor(
    readonly db: Database.Database,
    options: { path: string; busyTimeoutMs: number; serving?: boolean },
  ) {
    // A file gets a writer thread so commits never stall requests; `:memory:` exists only on this
    // connection, so it commits here.
    this.sink =
      options.path === ':memory:'
        ? inlineSink(db)
        : threadSink(options.path, options.busyTimeoutMs, { eager: options.serving ?? false })
    this.plants = new SqlitePlantStore(db, this.sink)
    this.tokens = new SqliteTokenStore(db)
    this.events = new SqliteEventStore(db)
    this.idempotency = new SqliteIdempotencyStore(db)
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get()
  }

  async close(): Promise<void> {
    await this.plants.drain()
    await this.sink.close()
    if (this.db.open) this.db.close()
  }
}

/** Opens (creating if needed) and migrates a SQLite database in durable WAL mode. */
export function openSqlite(options: SqliteOptions): SqliteStore {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true })
  const db = new Database(options.path)
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000
  db.pragma(`busy_timeout = ${busyTimeoutMs}`)
  // WAL lets readers run beside the writer; FULL fsyncs the WAL on every commit, so an acknowledged
  // create survives power loss, not just a process crash.
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('foreign_keys = ON')
  migrate(db)
  return new SqliteStore(db, { path: options.path, busyTimeoutMs, serving: options.serving })
}
