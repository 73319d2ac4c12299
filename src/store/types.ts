import type { NewPlant, Plant } from '../plants/model.js'

// The repository interfaces the application depends on. Implementations live one folder per
// database; neither side knows about HTTP, and the same behaviour tests run against each.

export type CreateOutcome = 'created' | 'exists'

/**
 * What importing one plant did: inserted it, found an identical plant already there (a re-run), or
 * found a different plant under the same id (nothing written; the line is reported as rejected).
 */
export type ImportOutcome = 'created' | 'unchanged' | 'conflict'

export interface ImportItem {
  plant: NewPlant
  /** Written in the same transaction only when the plant is inserted, as for create. */
  extras?: CreateExtras
}

/** A domain event stored in the same transaction as the change that caused it (transactional outbox). */
export interface OutboxEvent {
  /** Unique, stable id (the Standard Webhooks `webhook-id`). */
  id: string
  type: string
  occurredAt: Date
  /** The complete JSON envelope, ready to deliver byte for byte. */
  payload: string
}

/** What else a create writes in its transaction, only when the plant itself is inserted. */
export interface CreateExtras {
  event?: OutboxEvent
}

export interface PlantStore {
  /**
   * Durably inserts the plant (and its extras, in the same transaction); resolves only after the
   * row is committed. A duplicate id resolves to 'exists' and writes nothing.
   */
  create(plant: NewPlant, extras?: CreateExtras): Promise<CreateOutcome>
  get(id: bigint): Promise<Plant | undefined>
  /**
   * Inserts a batch in one transaction (all or nothing on a database failure) and resolves with one
   * outcome per item, in order. Never overwrites: an existing id is 'unchanged' when its name and tag
   * equal the item's, else 'conflict'. Used by `plantstore import`.
   */
  importBatch(items: readonly ImportItem[]): Promise<ImportOutcome[]>
  /**
   * Up to `limit` plants with an id greater than `after` (from the smallest id when null), in id
   * order. Keyset pages: an export walks the whole table in bounded memory without OFFSET.
   */
  scan(after: bigint | null, limit: number): Promise<Plant[]>
}

export interface TokenRecord {
  /** The public id: shown by `token list`, taken by `token revoke`, embedded in the token. */
  id: string
  name: string
  /** Hex SHA-256 of the secret part; the secret itself is never stored. */
  secretHash: string
  scopes: string[]
  createdAt: Date
  expiresAt: Date | null
  lastUsedAt: Date | null
  revokedAt: Date | null
}

export interface TokenStore {
  insert(token: TokenRecord): Promise<void>
  find(id: string): Promise<TokenRecord | undefined>
  list(): Promise<TokenRecord[]>
  /** Marks the token revoked and bumps the revocation epoch; false when no such token. */
  revoke(id: string, at: Date): Promise<boolean>
  count(): Promise<number>
  touchLastUsed(id: string, at: Date): Promise<void>
  /**
   * A number that changes whenever any process revokes a token. Called on every authenticated
   * request, so it must be cheap and synchronous; caches of verified tokens are dropped when it moves.
   */
  revocationEpoch(): number
}

export interface EventStore {
  /** Events with a sequence number above `afterSeq`, oldest first. */
  listSince(afterSeq: number, limit: number): Promise<Array<OutboxEvent & { seq: number }>>
}

/** What a retention sweep removes: everything older than these instants. */
export interface RetentionPolicy {
  now: Date
  /** Outbox events created before this. */
  eventsBefore: Date
  /** Tokens that expired, or were revoked, before this. */
  tokensBefore: Date
}

/** Rows deleted per kind, e.g. `{events: 120, tokens: 2}`; a kind the store does not hold is absent. */
export type SweepCounts = Record<string, number>

export interface MaintenanceStore {
  /**
   * Deletes what the policy says has expired, in small transactions so that writers are never held
   * up for long. Implementations also sweep expired idempotency keys and old webhook delivery
   * attempts where their tables exist (see the SQLite implementation's list of sweeps).
   */
  sweep(policy: RetentionPolicy): Promise<SweepCounts>
  /**
   * Bounds the write-ahead log: SQLite checkpoints and truncates its WAL file. A no-op where the
   * database manages its own log (PostgreSQL).
   */
  checkpoint(): Promise<void>
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  readonly plants: PlantStore
  readonly tokens: TokenStore
  readonly events: EventStore
  readonly maintenance: MaintenanceStore
  /**
   * Writes a consistent copy of the whole database to `file` (which must not exist) while the
   * database keeps serving reads and writes. SQLite: a single file that can replace the database
   * file. A store without an online file copy (PostgreSQL: use pg_dump) rejects with a message that
   * says what to use instead.
   */
  backup(file: string): Promise<void>
  /** Resolves when the database answers; used by /readyz. */
  ping(): Promise<void>
  /** Finishes pending writes, then closes the database. */
  close(): Promise<void>
}
