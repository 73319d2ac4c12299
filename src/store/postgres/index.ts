import pg from 'pg'
import { NO_FILE_BACKUP_ON_POSTGRES } from '../errors.js'
import type { Store } from '../types.js'
import { explainRefusedConnection, guarded } from './errors.js'
import { PostgresEventStore } from './events.js'
import { PostgresIdempotencyStore } from './idempotency.js'
import { PostgresLeaseStore } from './leases.js'
import { PostgresMaintenanceStore } from './maintenance.js'
import { migrateDatabase } from './migrate.js'
import { PostgresPlantStore } from './plants.js'
import { PostgresRateLimitStore } from './rate-limits.js'
import { RevocationWatch } from './revocation.js'
import { PostgresStreamTicketStore } from './stream-tickets.js'
import { PostgresTokenStore } from './tokens.js'
import { PostgresWebhookStore } from './webhooks.js'

export interface PostgresOptions {
  url: string
  /**
   * Most pooled connections; one more is opened to LISTEN for revocations, re-read their epoch
   * (also while every pooled connection is taken) and respond to pings.
   */
  poolSize?: number
  /** Longest wait to connect, or for any one query; past it the operation fails as unavailable. */
  timeoutMs?: number
  /** How often the revocation epoch is re-read when no notification arrives. */
  revocationPollMs?: number
  /**
   * False for a process that verifies no tokens (the webhook dispatcher's thread): it then opens no
   * listening connection and reads no epoch.
   */
  watchRevocations?: boolean
  /** False where the process has migrated the database already (see OpenOptions). */
  migrate?: boolean
}

export const DEFAULT_POOL_SIZE = 10
export const DEFAULT_TIMEOUT_MS = 5000
export const DEFAULT_REVOCATION_POLL_MS = 1000

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const
  readonly plants: PostgresPlantStore
  readonly tokens: PostgresTokenStore
  readonly events: PostgresEventStore
  readonly webhooks: PostgresWebhookStore
  readonly maintenance: PostgresMaintenanceStore
  readonly idempotency: PostgresIdempotencyStore
  readonly leases: PostgresLeaseStore
  readonly streamTickets: PostgresStreamTicketStore
  readonly rateLimits: PostgresRateLimitStore

  constructor(
    readonly pool: pg.Pool,
    private readonly watch: RevocationWatch,
    readonly migrated: readonly string[] = [],
  ) {
    this.tokens = new PostgresTokenStore(pool, watch)
    this.events = new PostgresEventStore(pool, watch)
    this.plants = new PostgresPlantStore(pool, (written) => this.events.committed(written))
    this.webhooks = new PostgresWebhookStore(pool)
    this.maintenance = new PostgresMaintenanceStore(pool)
    this.idempotency = new PostgresIdempotencyStore(pool)
    this.leases = new PostgresLeaseStore(pool)
    this.streamTickets = new PostgresStreamTicketStore(pool)
    this.rateLimits = new PostgresRateLimitStore(pool)
  }

  /** There is no consistent single-file copy of a PostgreSQL database to take from a client. */
  async backup(_file: string): Promise<void> {
    throw new Error(NO_FILE_BACKUP_ON_POSTGRES)
  }

  async ping(): Promise<void> {
    // Readiness is whether this instance reaches its database, not whether a pooled connection is
    // free: a ping queued behind a burst of slow queries would take the instance (and, under the same
    // load, every instance) out of the load balancer while the database is fine.
    if (this.watch.started) await guarded(() => this.watch.check())
    else await guarded(() => this.pool.query('SELECT 1'))
  }

  async close(): Promise<void> {
    await this.plants.drain()
    await this.watch.close()
    await this.pool.end()
  }
}

/** Connects, migrates under an advisory lock, and starts watching for revocations. */
export async function openPostgres(options: PostgresOptions): Promise<PostgresStore> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    connectionTimeoutMillis: timeoutMs,
    // The client gives up on a reply after this; the server stops the statement too.
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    // A client that gave up on a transaction closes its connection, but across a link that stalled
    // the server never learns of it: the session stays in its transaction, holding its row locks
    // and the outbox lock every instance's writes wait for, until TCP keepalive notices (hours).
    // No transaction of ours waits on its client between statements for anything near this long.
    idle_in_transaction_session_timeout: timeoutMs,
    keepAlive: true,
    application_name: 'plantstore',
  }
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? DEFAULT_POOL_SIZE })
  // A connection that breaks (the server restarts, the network drops) emits 'error'; unheard, that
  // would end the process. The failure also reaches the query that was running, or the next one on
  // that connection ("not queryable"), which reports it as unavailable and discards the connection;
  // an idle one is dropped by the pool itself.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  const watch = new RevocationWatch({
    client: connection,
    pool,
    pollIntervalMs: options.revocationPollMs ?? DEFAULT_REVOCATION_POLL_MS,
  })
  let migrated: string[]
  try {
    migrated =
      options.migrate === false ? [] : (await guarded(() => migrateDatabase(connection))).map((m) => m.name)
    if (options.watchRevocations !== false) await guarded(() => watch.start())
  } catch (error) {
    await watch.close()
    await pool.end().catch(() => {})
    throw explainRefusedConnection(error, options.url)
  }
  return new PostgresStore(pool, watch, migrated)
}
