import type { NewPlant, Plant } from '../plants/model.js'

// The repository interfaces the application depends on. Implementations live one folder per
// database; neither side knows about HTTP, and the same behaviour tests run against each.

export type CreateOutcome = 'created' | 'exists'

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

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  readonly plants: PlantStore
  readonly tokens: TokenStore
  readonly events: EventStore
  /** Resolves when the database answers; used by /readyz. */
  ping(): Promise<void>
  /** Finishes pending writes, then closes the database. */
  close(): Promise<void>
}
