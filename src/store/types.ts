import type { NewPlant, Plant } from '../plants/model.js'

// The repository interfaces the application depends on. Implementations live one folder per
// database; neither side knows about HTTP, and the same behaviour tests run against each.

/**
 * 'exists': the id is taken, nothing was written. 'key-taken': the plant was free but the
 * idempotency record's (token, key) is held by an unexpired record, so nothing was written either.
 */
export type CreateOutcome = 'created' | 'exists' | 'key-taken'

/**
 * What importing one plant did: inserted it, found an identical plant already there (a re-run), or
 * found a different plant under the same id (nothing written; the line is reported as rejected).
 */
export type ImportOutcome = 'created' | 'unchanged' | 'conflict'

export interface ImportItem {
  plant: NewPlant
  /**
   * Written in the same transaction only when the plant is inserted, as a create's event is, and
   * built, as that one is, at the time the transaction writes it (see CreateExtras).
   */
  event?: (at: Date) => OutboxEvent
}

/** A domain event stored in the same transaction as the change that caused it (transactional outbox). */
export interface OutboxEvent {
  /**
   * Unique, stable id (the Standard Webhooks `webhook-id`). A change's event is written without one:
   * the store derives it from the event's seq and time, so the outbox keeps no unique index of its
   * ids. Read back, every event has one.
   */
  id?: string | undefined
  type: string
  occurredAt: Date
  /** The complete JSON envelope, ready to deliver byte for byte. */
  payload: string
  /** The W3C traceparent of the traced request (or command) that caused it; its attempts link to it. */
  traceparent?: string | undefined
  /** For a plant's change: who made it and what it replaced, stored in the same row (the change feed's facts). */
  change?: ChangeFacts | undefined
}

/** Who made a change: a token (its public id), a JWT's issuer and subject, or a command on the database host. */
export type Actor = { tokenId: string } | { iss: string; sub: string } | { cli: string }

/** What a plant's change records beside its event, in the same row of the same transaction. */
export interface ChangeFacts {
  plantId: bigint
  actor: Actor
  /** The X-Request-Id of the response that made it; null for a change a command made. */
  requestId: string | null
  /**
   * For an update, the plant as it was, as JSON text (plantJson). Null for a create (there was none)
   * and a delete (the event's payload carries the plant as it was).
   */
  before: string | null
}

/** A change as the feed and a plant's history show it, read back from the outbox. */
export interface ChangeRecord {
  /** The event's place in commit order: the feed's cursor is made from it. */
  seq: number
  type: string
  time: Date
  /** Null only for a change stored before changes recorded their actor. */
  actor: Actor | null
  requestId: string | null
  /** The plant before the change and after it, as JSON text with exact ids; null where there was none. */
  before: string | null
  after: string | null
}

export interface ChangeQuery {
  /** Changes with a seq above this, oldest first. */
  afterSeq: number
  /** At most this many; 0 reads none, and the page's lastSeq then says where the feed stands now. */
  limit: number
  /** Only changes of these types; all plant change types when absent. */
  types?: readonly string[]
}

export interface ChangePage {
  changes: ChangeRecord[]
  /**
   * Where the next read resumes (its afterSeq): the last change's seq when the page is full, else the
   * highest seq the read looked at, so that a reader filtering by type does not scan the same events
   * again. Never below the query's afterSeq. Every event at or below it is committed and was seen.
   */
  lastSeq: number
  /**
   * lastSeq is the newest seq the read could see: nothing follows yet. False when the page is full,
   * or when the read stopped after looking at FEED_SCAN_SEQS seqs (change-row.ts): read on at once.
   */
  reachedEnd: boolean
}

/** The first answer to a create that carried an Idempotency-Key, kept to replay to its retries. */
export interface IdempotencyRecord {
  /** The public id of the token that sent the key: keys of different tokens never meet. */
  tokenId: string
  key: string
  /** A digest of the request's parsed content; a retry with another fingerprint is refused. */
  fingerprint: string
  status: number
  /** The response body, byte for byte. */
  body: string
  expiresAt: Date
}

/** What else a create writes in its transaction, only when the plant itself is inserted. */
export interface CreateExtras {
  /**
   * Builds the event at the time the create's transaction writes it, not when it was asked for: a
   * create that waited (in a batch, or for the delete that freed its id) is the later change, and
   * subscribers order a plant's events by their timestamp.
   */
  event?: (at: Date) => OutboxEvent
  /**
   * Stored with the plant. An expired record under the same (tokenId, key) is replaced; an unexpired
   * one makes the create write nothing and resolve to 'key-taken'.
   */
  idempotency?: IdempotencyRecord
}

/** A plant with its version, which starts at 1 and grows by one on every change (the ETag's source). */
export interface VersionedPlant {
  plant: Plant
  version: number
}

/** The orders a listing can take. Each is total: ties are broken by id, in the same direction. */
export type SortField = 'id' | 'name' | 'createdAt' | 'updatedAt'

export interface PlantOrder {
  field: SortField
  descending: boolean
}

/** Which plants a listing and its count keep; every condition given must hold. */
export interface PlantFilter {
  /**
   * Plants whose name contains this text as search compares them: the store folds both with foldName
   * (src/plants/fold.ts), the names as it writes them and this text as it reads the query. A literal
   * substring (`%`, `_` and `\` are ordinary characters), 1 to 200 code points.
   */
  text?: string
  /** Plants whose tag is any of these (one or more, distinct). */
  tags?: readonly string[]
}

/**
 * Where a page starts: strictly after this plant in the listing's order. `key` is the plant's sort key
 * as ListedPlant gave it (absent for the id order), so that a cursor carries the exact stored value.
 */
export interface ListPosition {
  id: bigint
  key?: string
}

export interface ListQuery extends PlantFilter {
  /** Ascending id when absent. */
  order?: PlantOrder
  after?: ListPosition
  /** At most this many plants. */
  limit: number
}

/**
 * A listed plant with its sort key, the exact stored value as text: the name for the name order; for
 * createdAt and updatedAt the stored instant as an integer count since the epoch (in the store's own
 * unit: SQLite milliseconds, PostgreSQL microseconds). Absent for the id order.
 */
export interface ListedPlant {
  plant: Plant
  key?: string
}

/** A plant of a batch create, with the event its insert writes in the same transaction. */
export interface BatchCreateItem {
  plant: NewPlant
  event?: (at: Date) => OutboxEvent
}

/**
 * A batch create's outcome: every plant inserted, or none (`exists`: the index of the first item
 * whose id is stored already; ids repeated within the batch are refused before the store).
 */
export type BatchCreateOutcome = { outcome: 'created' } | { outcome: 'exists'; index: number }

export interface BatchRemoveOptions {
  /** Ids that are not stored are passed over rather than refusing the batch. */
  allowMissing: boolean
  /** The event a delete writes, from the plant as it was, dated as WriteOptions' event. */
  event?: (plant: Plant, at: Date) => OutboxEvent
}

/**
 * A batch delete's outcome: the ids deleted, in the order given, or none deleted (`missing`: the
 * first id given that is not stored, when allowMissing is false).
 */
export type BatchRemoveOutcome = { outcome: 'deleted'; ids: bigint[] } | { outcome: 'missing'; id: bigint }

/**
 * A change to a stored plant: a field that is absent stays as it is, `tag: null` removes the tag.
 * A full replacement names both fields.
 */
export interface PlantChange {
  name?: string
  tag?: string | null
}

export interface WriteOptions {
  /**
   * Apply only when this holds of the stored plant and its version (If-Match); otherwise nothing is
   * written. It is asked of the row the write holds, so no change slips between the check and the
   * write, not even a delete and a re-create that starts the version again.
   */
  precondition?: (plant: Plant, version: number) => boolean
  /**
   * Builds the outbox event from the plant as the write leaves it (for a delete, as it was), dated
   * `at`: the time the write's own transaction, which stores it, holds the row. Creates are dated the
   * same way (see CreateExtras), so that a plant's later change never has an earlier time, even where
   * a delete and the create that follows it commit together.
   */
  event?: (plant: Plant, at: Date, before?: Plant) => OutboxEvent
}

export type WriteResult =
  | { outcome: 'done'; plant: Plant; version: number }
  | { outcome: 'missing' }
  | { outcome: 'precondition-failed' }

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
   * Durably inserts every plant, each with its event, and the idempotency record, in one transaction,
   * or none of them: 'exists' names the first item whose id is stored already (or repeated within the
   * batch); 'key-taken' as for create. Resolves only after the commit, as create does.
   */
  createMany(
    items: readonly BatchCreateItem[],
    idempotency?: IdempotencyRecord,
  ): Promise<BatchCreateOutcome | 'key-taken'>
  /**
   * Durably deletes every plant named, each with its event, in one transaction, or none when one is
   * missing and `allowMissing` is false. The ids deleted are given in the order asked.
   */
  removeMany(ids: readonly bigint[], options: BatchRemoveOptions): Promise<BatchRemoveOutcome>
  read(id: bigint): Promise<VersionedPlant | undefined>
  /**
   * One page of the plants the filter keeps, in the query's order; the cost must not grow with the
   * position of `after`.
   */
  list(query: ListQuery): Promise<ListedPlant[]>
  /** How many plants the filter keeps, all of them (not a page's). */
  count(filter: PlantFilter): Promise<number>
  /**
   * Applies the change, bumps the version and writes the event, atomically with the check of
   * `precondition`. A change that leaves name and tag as they were writes nothing: the result
   * carries the current plant and its unchanged version.
   */
  update(id: bigint, change: PlantChange, options?: WriteOptions): Promise<WriteResult>
  /** Deletes the plant (and writes the event) atomically with the check; the result carries the plant and version it had. */
  remove(id: bigint, options?: WriteOptions): Promise<WriteResult>
}

export interface IdempotencyStore {
  /** The unexpired record for this token and key, if any. */
  find(tokenId: string, key: string, now: Date): Promise<IdempotencyRecord | undefined>
  /**
   * Deletes records that expired before `now`, in chunks of their own transaction; returns how many.
   * Once `signal` is aborted it deletes no further chunk.
   */
  purgeExpired(now: Date, signal?: AbortSignal): Promise<number>
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
  /** Hex SHA-256 of the secret the last roll replaced, accepted until `previousSecretExpiresAt`. */
  previousSecretHash: string | null
  previousSecretExpiresAt: Date | null
  /** The token's own limit, overriding the service-wide one; null: the service-wide one applies. */
  rateLimit: { max: number; windowMs: number } | null
  /** Who made it over HTTP; null or absent: made on the database host (`plantstore token create`). */
  createdBy?: TokenMaker | null
}

/** The maker of a token issued over HTTP: an opaque token, or a JWT's issuer and subject. */
export type TokenMaker = { tokenId: string } | { iss: string; sub: string }

/** Where a page of the token listing starts: after this token, in the order of creation. */
export interface TokenCursor {
  createdAt: Date
  id: string
}

export interface TokenListOptions {
  limit: number
  after?: TokenCursor
}

/** A roll's new secret, and how long the replaced one goes on being accepted. */
export interface TokenRoll {
  secretHash: string
  /** Until then the replaced secret is accepted too; null: it stops at once. */
  previousSecretExpiresAt: Date | null
}

/** What a revocation found: the token revoked now, one revoked before, or no token by that id. */
export type Revocation = 'revoked' | 'already-revoked' | 'not-found'

export interface TokenStore {
  insert(token: TokenRecord): Promise<void>
  find(id: string): Promise<TokenRecord | undefined>
  /** Oldest first (by creation, then id); every token, or one page of them. */
  list(page?: TokenListOptions): Promise<TokenRecord[]>
  /**
   * Replaces the secret of an active token (neither revoked nor expired at `at`) in one statement:
   * the current secret becomes the previous one, and a previous one left by an earlier roll is
   * dropped. Bumps the revocation epoch as a revocation does, so every instance drops what it cached
   * of the token. Undefined, changing nothing, when no active token has that id.
   */
  roll(id: string, roll: TokenRoll, at: Date): Promise<TokenRecord | undefined>
  /**
   * Marks the token revoked and bumps the revocation epoch. A token revoked before keeps its first
   * revocation time and leaves the epoch alone: a bump would empty every instance's cache of verified
   * tokens for nothing.
   */
  revoke(id: string, at: Date): Promise<Revocation>
  /**
   * Stores `token` only when the store holds no token at all, exclusively of every other such call:
   * instances starting at once on an empty store bootstrap one token between them, not one each.
   * `deliver` runs before the commit, and when it throws nothing is stored. False, without calling
   * `deliver`, when a token already exists.
   */
  insertFirst(token: TokenRecord, deliver: () => void): Promise<boolean>
  touchLastUsed(id: string, at: Date): Promise<void>
  /**
   * A number that changes whenever any process revokes or rolls a token. Called on every authenticated
   * request, so it must be cheap and synchronous; caches of verified tokens are dropped when it moves.
   */
  revocationEpoch(): number
}

export interface EventStore {
  /** Events with a sequence number above `afterSeq`, oldest first. */
  listSince(afterSeq: number, limit: number): Promise<Array<OutboxEvent & { id: string; seq: number }>>
  /**
   * Plant changes (events of the plant.* types) in commit order. On PostgreSQL seq order is commit
   * order: an event takes its seq under the outbox lock, held until its transaction ends (outbox-lock.ts).
   */
  changes(query: ChangeQuery): Promise<ChangePage>
  /** One plant's changes, newest first, those with a seq below `beforeSeq` when given. */
  history(plantId: bigint, limit: number, beforeSeq?: number): Promise<ChangeRecord[]>
  /**
   * The highest seq retention has deleted (0: none yet). A reader resuming below it may have missed
   * changes that are gone.
   */
  retentionHorizon(): Promise<number>
  /**
   * Calls `listener` soon after any transaction that wrote plant changes commits: at once for this
   * process's commits, and for other processes' where the database can tell (PostgreSQL: NOTIFY). A
   * wake-up only: the listener reads the changes with `changes`. Returns a function that removes it.
   */
  watchChanges(listener: () => void): () => void
  /**
   * Calls `listener` after a transaction that appended events commits, so a dispatcher can start at
   * once instead of at its next poll. Optional and best effort: dispatchers poll anyway, and an
   * implementation may report only its own process's commits (or others' too, e.g. LISTEN/NOTIFY),
   * and only those that left the dispatcher work (both stores: that queued a delivery). Returns a
   * function that removes the listener.
   */
  watch?(listener: () => void): () => void
}

export type WebhookDisabledReason = 'manual' | 'failing'

/** A subscription: where to send which event types, and the secrets that sign them. */
export interface WebhookRecord {
  /** `wh_` + 22 base64url characters. */
  id: string
  url: string
  /** Event types it receives, e.g. `plant.created`. */
  events: string[]
  description: string | null
  /** `whsec_` + base64 of the key. */
  secret: string
  /** After a rotation, the previous secret keeps signing (a second signature) until it expires. */
  previousSecret: string | null
  previousSecretExpiresAt: Date | null
  disabledAt: Date | null
  disabledReason: WebhookDisabledReason | null
  /** Start of the current run of failed attempts; null once an attempt succeeds. */
  failingSince: Date | null
  createdAt: Date
  updatedAt: Date
}

export type WebhookChanges = Partial<
  Pick<WebhookRecord, 'url' | 'events' | 'description' | 'disabledAt' | 'disabledReason' | 'failingSince'>
> & { updatedAt: Date }

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

/** One event for one subscription, with the outcome of its latest attempt. */
export interface DeliveryRecord {
  /** `dlv_` + 24 lowercase hex digits. */
  id: string
  webhookId: string
  eventId: string
  eventType: string
  status: DeliveryStatus
  /** Attempts made since the delivery was (re)queued. */
  attempts: number
  nextAttemptAt: Date | null
  lastAttemptAt: Date | null
  lastStatusCode: number | null
  lastError: string | null
  lastDurationMs: number | null
  createdAt: Date
  /** The event's place in the outbox; with createdAt, where the delivery sits in its listing. */
  eventSeq: number
}

/** A place in a subscription's deliveries, newest first: a page after it starts with older ones. */
export interface DeliveryCursor {
  createdAt: Date
  eventSeq: number
}

/** One attempt of a delivery, as recorded when its outcome was applied. */
export interface AttemptRecord {
  /** When the attempt ended: the delivery's lastAttemptAt for its latest attempt. */
  attemptedAt: Date
  durationMs: number
  /** The receiver's HTTP status; null when no answer came. */
  statusCode: number | null
  /** Why the attempt failed (the network error, or the status); null when it succeeded. */
  error: string | null
  /** The first bytes of the receiver's answer (at most ANSWER_BODY_KEPT_BYTES), as they came. */
  body: Buffer | null
  /** Whether the answer went on past `body`. */
  bodyTruncated: boolean
  /** Orders attempts recorded in the same millisecond; with attemptedAt, its place in the listing. */
  seq: number
}

/** A place in a delivery's attempts, newest first: a page after it starts with older ones. */
export interface AttemptCursor {
  attemptedAt: Date
  seq: number
}

/** A delivery leased to one dispatcher, with everything needed to send it. */
export interface ClaimedDelivery {
  id: string
  webhookId: string
  url: string
  secret: string
  previousSecret: string | null
  previousSecretExpiresAt: Date | null
  eventId: string
  eventType: string
  payload: string
  /** The traceparent stored with the event (see OutboxEvent), if any. */
  traceparent: string | null
  /** The number of this attempt, 1 for the first since (re)queueing. */
  attempt: number
}

/** The outcome of one attempt, as the dispatcher decided it. */
export interface AttemptResult {
  deliveryId: string
  webhookId: string
  /** The lease owner that made the attempt; a result from a lease that was lost is ignored. */
  owner: string
  at: Date
  ok: boolean
  statusCode: number | null
  error: string | null
  durationMs: number
  /** The first bytes of the receiver's answer; null when no answer came. */
  body: Buffer | null
  bodyTruncated: boolean
  /** When to try again; null when no attempt is left (the delivery is then failed, and kept). */
  nextAttemptAt: Date | null
  /** A failed attempt disables the subscription when its failures began at or before this. */
  disableIfFailingSince: Date
  /**
   * A failed attempt continues the subscription's failing spell when its previous failure came at or
   * after this; one before (nothing was tried for longer than a failing receiver's retries leave
   * between two attempts) ended that spell, and this failure starts a new one.
   */
  failingContinuesSince: Date
}

/**
 * Subscriptions and their delivery queue. Several processes may run dispatchers against one
 * database; the queue methods are what keep them from sending one attempt twice at once:
 * - `fanOut` and `claim` are each one short transaction that locks what it takes (SQLite: a
 *   `BEGIN IMMEDIATE` transaction; PostgreSQL: `SELECT … FOR UPDATE SKIP LOCKED`), so two callers
 *   never take the same event or the same delivery.
 * - A claim is a lease until `now + leaseMs`; a delivery whose lease ran out (its process died) can
 *   be claimed again, which is why delivery is at-least-once.
 * - `complete` applies a result only while the caller still holds the lease.
 */
export interface WebhookStore {
  /** Inserts a subscription; it receives the events committed after this call. */
  insert(webhook: WebhookRecord): Promise<void>
  find(id: string): Promise<WebhookRecord | undefined>
  /** Every subscription, oldest first. */
  list(): Promise<WebhookRecord[]>
  /** Applies the changes; undefined when there is no such subscription. */
  update(id: string, changes: WebhookChanges): Promise<WebhookRecord | undefined>
  /**
   * Makes `secret` the subscription's secret and the one it replaces, as stored at that instant, the
   * previous one until `previousExpiresAt`; undefined when there is no such subscription.
   */
  rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: Date,
    at: Date,
  ): Promise<WebhookRecord | undefined>
  /** Deletes the subscription and its deliveries; false when there is none. */
  delete(id: string): Promise<boolean>

  /** The subscription's deliveries, newest first (after `after`, when given). */
  listDeliveries(
    webhookId: string,
    options: { limit: number; status?: DeliveryStatus; after?: DeliveryCursor },
  ): Promise<DeliveryRecord[]>
  /**
   * A page of the delivery's attempts, newest first (after `after`, when given); undefined when the
   * subscription has no such delivery.
   */
  listAttempts(
    webhookId: string,
    deliveryId: string,
    options: { limit: number; after?: AttemptCursor },
  ): Promise<AttemptRecord[] | undefined>
  /** Puts a delivery back in the queue, due at `at`, with a fresh retry schedule. */
  requeueDelivery(webhookId: string, deliveryId: string, at: Date): Promise<DeliveryRecord | undefined>
  /**
   * Queues every event of the subscription's types that occurred at or after `since`, due at `at`;
   * an event already delivered is queued again (same event, same `webhook-id`). Returns how many.
   */
  replay(webhookId: string, since: Date, at: Date): Promise<number>
  /**
   * Queues again, due at `at`, every delivery of the subscription that ended failed at or after
   * `since` (its last attempt then), with a fresh retry schedule. Returns how many.
   */
  recover(webhookId: string, since: Date, at: Date): Promise<number>
  /**
   * Stores `event` and queues it for this subscription only, due at `event.occurredAt`; undefined,
   * with nothing stored, when there is no such subscription.
   */
  enqueueTest(webhookId: string, event: OutboxEvent): Promise<DeliveryRecord | undefined>

  /**
   * Turns up to `limit` events not yet fanned out into one pending delivery per enabled subscription
   * of their type created before them, and marks them fanned out, atomically. Returns the number of
   * events handled (0: nothing waits).
   */
  fanOut(limit: number, at: Date): Promise<number>
  /**
   * Leases up to `limit` due deliveries of enabled subscriptions (oldest due first), counting the
   * attempt: of each subscription at most `perWebhook` less the attempts the caller has in flight to
   * it (`inFlight`, by subscription id), so that one never has more than `perWebhook` at once.
   */
  claim(options: {
    owner: string
    now: Date
    leaseMs: number
    limit: number
    perWebhook: number
    inFlight: ReadonlyMap<string, number>
  }): Promise<ClaimedDelivery[]>
  /**
   * Records attempt results in one transaction, each attempt kept beside its delivery's change (a
   * result whose lease was lost changes nothing and is not kept). A success clears the subscription's failing state;
   * a failure starts it (if not started, or if the previous failure came before
   * `failingContinuesSince`) and disables the subscription once it began at or before
   * `disableIfFailingSince`. Returns the ids of subscriptions it disabled.
   */
  complete(results: AttemptResult[]): Promise<string[]>
  /** Gives up leases without counting their attempts (a dispatcher stopping mid-send). */
  release(owner: string, deliveryIds: string[]): Promise<void>
  /** How much work waits and how deliveries ended, for the metrics; cheap enough for every scrape. */
  queueStats(): Promise<WebhookQueueStats>
  /**
   * Whether a dispatcher has anything to do, now or later: a subscription exists or an event awaits
   * fan-out. Two index probes, cheap enough to ask several times a second.
   */
  hasWork(): Promise<boolean>
}

export interface WebhookQueueStats {
  /** Committed events not yet fanned out into deliveries. */
  awaitingFanOut: number
  /** Stored deliveries by status (pending is the queue depth; the others are kept outcomes). */
  deliveries: Record<DeliveryStatus, number>
}

/**
 * Named leases, for a duty that one process at a time should carry among every process on the
 * database (the webhook dispatcher). Each call is one atomic compare-and-set, so two callers never
 * both hold a lease that is current at their `now`. Time is the callers' clock, as for delivery
 * leases: processes on different machines need clocks that agree to well within a lease's length.
 */
export interface LeaseStore {
  /**
   * Takes the lease for `holder` until `now + ttlMs` when it is free, expired at `now`, or already
   * `holder`'s (a renewal). True when `holder` holds it afterwards, false when another holder does.
   */
  acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean>
  /** Frees the lease if `holder` holds it, so that another process may take it at once. */
  release(name: string, holder: string): Promise<void>
}

/**
 * One instance's change to its part of a key's allowance in one window (see RateLimitStore). Windows
 * are aligned on the database's clock: `start` is a multiple of `windowMs` in milliseconds since the
 * epoch, the same for every instance.
 */
export interface WindowChange {
  /** The counted key: `token:…` or `address:…`. */
  key: string
  windowMs: number
  start: number
  /** The key's limit in this window. */
  max: number
  /** Requests the instance admitted beyond what it had reserved: reserved now, whatever the limit. */
  overdraft: number
  /** Above 0: more allowance wanted, granted as far as the limit leaves any. Below 0: given back. */
  requested: number
}

/** What a settlement made of one WindowChange. */
export interface WindowGrant {
  /** Of what was requested, what the instance now holds in addition (or, below 0, gave back). */
  granted: number
  /** The window's allowance that no instance holds (the limit less every reservation); may be below 0. */
  unreserved: number
}

export interface Settlement {
  /** One grant per change, in the order of the changes. */
  grants: WindowGrant[]
  /** The database's clock when it settled, in milliseconds since the epoch. */
  now: number
}

/**
 * Rate-limit windows shared by the processes on one database, so that a limit holds across them.
 * Each process counts its requests in memory and reserves allowance ahead, in batches: nothing here
 * is called per request.
 */
export interface RateLimitStore {
  /**
   * Applies every change in one atomic step per window, reserving at most what each window's limit
   * leaves unreserved, and removes windows that ended long ago.
   */
  settle(changes: readonly WindowChange[]): Promise<Settlement>
}

/** What a retention sweep removes: everything older than these instants. */
export interface RetentionPolicy {
  now: Date
  /** Outbox events created before this. */
  eventsBefore: Date
  /** Tokens that expired, or were revoked, before this. */
  tokensBefore: Date
  /** Once aborted, the sweep deletes no further chunk (the process is stopping). */
  signal?: AbortSignal
}

/** What the retention sweep deletes, by kind (the label of plantstore_retention_deleted_total). */
export const SWEPT_KINDS = ['webhook_deliveries', 'events', 'tokens', 'idempotency_keys'] as const
/** Rows deleted per kind, e.g. `{events: 120, tokens: 2}`; a kind the sweep did not reach is absent. */
export type SweepCounts = Partial<Record<(typeof SWEPT_KINDS)[number], number>>

export interface MaintenanceStore {
  /**
   * Deletes what the policy says has expired, in small transactions so that writers are never held
   * up for long: finished (not pending) webhook deliveries created before `eventsBefore`, then events
   * created before it that were fanned out and that no delivery refers to any more (an event still
   * owed to a receiver is never dropped), then old expired or revoked tokens. Idempotency keys have
   * their own purge.
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
  /** The migrations opening this store applied (`005_webhooks`, …), oldest first; empty when current. */
  readonly migrated: readonly string[]
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
  readonly webhooks: WebhookStore
  readonly idempotency: IdempotencyStore
  readonly leases: LeaseStore
  readonly streamTickets: StreamTicketStore
  /**
   * Where several processes settle their rate-limit counts; absent where each process counts alone
   * (SQLite).
   */
  readonly rateLimits?: RateLimitStore
  /** Resolves when the database answers; used by /readyz. */
  ping(): Promise<void>
  /** Finishes pending writes, then closes the database. */
  close(): Promise<void>
}

/** The key stream tickets are signed with: one per database, so that every instance accepts every ticket. */
export interface StreamTicketStore {
  /** The database's key; `candidate` becomes it when it has none yet. */
  key(candidate: Buffer): Promise<Buffer>
}

/** What the token commands use of a store: its tokens, and close. */
export type TokenDatabase = Pick<Store, 'tokens' | 'close'>
