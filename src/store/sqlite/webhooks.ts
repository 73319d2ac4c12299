import type { Database, Statement } from 'better-sqlite3'
import { CHUNK, inChunks } from '../chunks.js'
import type {
  AttemptCursor,
  AttemptRecord,
  AttemptResult,
  ClaimedDelivery,
  DeliveryCursor,
  DeliveryRecord,
  DeliveryStatus,
  OutboxEvent,
  WebhookChanges,
  WebhookDisabledReason,
  WebhookQueueStats,
  WebhookRecord,
  WebhookStore,
} from '../types.js'
import { CHANGE_COLUMNS } from '../webhook-columns.js'
import { retryWhileBusy } from './busy.js'
import { EventTimes } from './event-time.js'
import { deliveryId, eventIdSql, TYPE_MATCHES } from './fan-out.js'

interface WebhookRow {
  id: string
  url: string
  events: string
  description: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: number | null
  disabled_at: number | null
  disabled_reason: string | null
  failing_since: number | null
  created_at: number
  updated_at: number
}

interface DeliveryRow {
  id: string
  webhook_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_at: number | null
  last_attempt_at: number | null
  last_status_code: number | null
  last_error: string | null
  last_duration_ms: number | null
  created_at: number
  event_seq: number
}

interface AttemptRow {
  seq: number
  attempted_at: number
  duration_ms: number
  status_code: number | null
  error: string | null
  body: Buffer | null
  body_truncated: number
}

interface ClaimRow {
  id: string
  webhook_id: string
  attempts: number
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: number | null
  event_id: string
  event_type: string
  payload: string
  traceparent: string | null
  event_seq: number
}

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms))
const ms = (d: Date | null | undefined): number | null => (d ? d.getTime() : null)

function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: row.events.split(' ').filter(Boolean),
    description: row.description,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: date(row.previous_secret_expires_at),
    disabledAt: date(row.disabled_at),
    disabledReason: row.disabled_reason as WebhookDisabledReason | null,
    failingSince: date(row.failing_since),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  }
}

function toDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: date(row.next_attempt_at),
    lastAttemptAt: date(row.last_attempt_at),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastDurationMs: row.last_duration_ms,
    createdAt: new Date(row.created_at),
    eventSeq: row.event_seq,
  }
}

function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    attemptedAt: new Date(row.attempted_at),
    durationMs: row.duration_ms,
    statusCode: row.status_code,
    error: row.error,
    body: row.body,
    bodyTruncated: row.body_truncated === 1,
    seq: row.seq,
  }
}

/**
 * How far a replay looks back before its start for events dated out of seq order (a clock that
 * stepped back, a test message dated before its transaction): they are found by seq (EventTimes).
 */
const REPLAY_SLACK_MS = 1000

/** How long a queue transaction keeps retrying a locked database before it fails. */
const BUSY_RETRY_MS = 5000

/**
 * Queues a delivery again (retry, replay) with a fresh schedule. One with an attempt in flight keeps
 * that attempt's lease, so no second attempt starts beside it: its next attempt stays at the lease's
 * end, and its attempts count drops to 0 (none since the requeue), which tells the attempt's
 * completion to leave it pending and due at once. A lease that ran out is due already.
 */
const REQUEUE = `status = 'pending', attempts = 0, next_attempt_at = CASE
  WHEN webhook_deliveries.lease_owner IS NULL THEN @at ELSE webhook_deliveries.lease_until END`

// Both probes stop at the first row: the primary key, and the partial index of unfanned events.
const HAS_WORK =
  'SELECT EXISTS (SELECT 1 FROM webhooks) OR EXISTS (SELECT 1 FROM events WHERE fanned_out_at IS NULL)'

const DELIVERY_COLUMNS = `d.id, d.webhook_id, ${eventIdSql('e')} AS event_id, e.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.last_duration_ms, d.created_at,
  d.event_seq`

/**
 * Subscriptions and the delivery queue in SQLite. Every write that dispatchers race on is one short
 * `BEGIN IMMEDIATE` transaction: it takes the database write lock before reading, so two processes
 * on one file see each other's claims and never lease the same delivery. Cheap reads outside any
 * transaction first check whether there is work at all, so an idle dispatcher never takes the lock.
 */
export class SqliteWebhookStore implements WebhookStore {
  private readonly selectOne: Statement
  private readonly anyAwaitingFanOut: Statement
  private readonly anyWork: Statement
  private readonly lastAwaitingFanOut: Statement
  private readonly fanOutEvents: Statement
  private readonly markFannedOut: Statement
  private readonly anyDue: Statement
  private readonly enabledWebhooks: Statement
  private readonly dueOfWebhook: Statement
  private readonly claimDetails: Statement
  private readonly lease: Statement
  private readonly finish: Statement
  private readonly recordAttempt: Statement
  private readonly clearFailing: Statement
  private readonly startFailing: Statement
  private readonly disableFailing: Statement
  private readonly unlease: Statement
  private readonly times: EventTimes

  constructor(private readonly db: Database) {
    this.times = new EventTimes(db)
    this.selectOne = db.prepare('SELECT * FROM webhooks WHERE id = ?')
    this.anyAwaitingFanOut = db.prepare('SELECT 1 FROM events WHERE fanned_out_at IS NULL LIMIT 1').pluck()
    this.anyWork = db.prepare(HAS_WORK).pluck()
    // A pass takes the oldest `limit` events awaiting fan-out, up to the last one's seq, and handles
    // them with one INSERT and one UPDATE: the write lock it shares with creates is held briefly.
    this.lastAwaitingFanOut = db
      .prepare(
        'SELECT max(seq) FROM (SELECT seq FROM events WHERE fanned_out_at IS NULL ORDER BY seq LIMIT ?)',
      )
      .pluck()
    this.fanOutEvents = db.prepare(
      `INSERT OR IGNORE INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
       SELECT ${deliveryId('e.seq', 'w.number')}, w.id, e.seq, 'pending', 0, @at, @at
       FROM events e JOIN webhooks w ON ${TYPE_MATCHES}
       WHERE e.fanned_out_at IS NULL AND e.seq <= @upTo AND w.disabled_at IS NULL AND w.after_seq < e.seq`,
    )
    this.markFannedOut = db.prepare(
      'UPDATE events SET fanned_out_at = @at WHERE fanned_out_at IS NULL AND seq <= @upTo',
    )
    // Only an enabled subscription's deliveries can be claimed: a disabled one's backlog must not make
    // every poll take the write lock (which creates wait for) to find nothing to claim.
    this.anyDue = db
      .prepare(
        `SELECT 1 FROM webhooks w WHERE w.disabled_at IS NULL AND EXISTS (
           SELECT 1 FROM webhook_deliveries d
           WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= ?) LIMIT 1`,
      )
      .pluck()
    // Each enabled subscription contributes at most its oldest due deliveries that fit beside its
    // attempts in flight, one index probe each, so a subscription with a large backlog never crowds
    // out the others.
    this.enabledWebhooks = db.prepare('SELECT id FROM webhooks WHERE disabled_at IS NULL').pluck()
    this.dueOfWebhook = db.prepare(
      `SELECT id, next_attempt_at FROM webhook_deliveries
       WHERE webhook_id = ? AND status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT ?`,
    )
    this.claimDetails = db.prepare(
      `SELECT d.id, d.webhook_id, d.attempts, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at,
              ${eventIdSql('e')} AS event_id, e.type AS event_type, e.payload, e.traceparent, d.event_seq
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.seq = d.event_seq
       WHERE d.id = ?`,
    )
    // A lease moves next_attempt_at to its end, so a leased delivery is not due until the lease runs
    // out: then another dispatcher may take it (its owner is presumed dead).
    this.lease = db.prepare(
      `UPDATE webhook_deliveries SET lease_owner = @owner, lease_until = @until, next_attempt_at = @until,
         attempts = attempts + 1
       WHERE id = @id`,
    )
    // No attempts counted while one was in flight means it was requeued meanwhile (see REQUEUE): the
    // attempt is recorded, and the delivery stays pending, due at once, whatever its outcome.
    this.finish = db.prepare(
      `UPDATE webhook_deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE @status END,
         next_attempt_at = CASE WHEN attempts = 0 THEN @at ELSE @next END, lease_owner = NULL,
         lease_until = NULL, last_attempt_at = @at, last_status_code = @statusCode, last_error = @error,
         last_duration_ms = @durationMs
       WHERE id = @id AND lease_owner = @owner`,
    )
    this.recordAttempt = db.prepare(
      `INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, status_code, error, body, body_truncated)
       VALUES (@id, @at, @durationMs, @statusCode, @error, @body, @bodyTruncated)`,
    )
    this.clearFailing = db.prepare(
      'UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
    )
    this.startFailing = db.prepare(
      `UPDATE webhooks SET failing_since = CASE
           WHEN failing_since IS NULL OR last_failure_at IS NULL OR last_failure_at < @continuesSince THEN @at
           ELSE failing_since END,
         last_failure_at = max(coalesce(last_failure_at, @at), @at)
       WHERE id = @id`,
    )
    this.disableFailing = db.prepare(
      `UPDATE webhooks SET disabled_at = @at, disabled_reason = 'failing', updated_at = @at
       WHERE id = @id AND disabled_at IS NULL AND failing_since <= @threshold`,
    )
    this.unlease = db.prepare(
      `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = @now,
         attempts = max(attempts - 1, 0)
       WHERE id = @id AND lease_owner = @owner`,
    )
  }

  /**
   * Runs a queue transaction, waiting for a write lock held elsewhere (a create's commit, another
   * process) between turns of the event loop: the dispatcher's connection has no busy timeout, so
   * SQLite's own busy handler never sleeps its thread. A claim that leases deliveries commits at
   * synchronous=FULL, and its fsync of the log also makes durable the events written to it before,
   * whose batch may still await its own fsync: nothing is sent that a power cut could take back.
   */
  private queued<T>(work: () => T): Promise<T> {
    return retryWhileBusy(() => this.db.transaction(work).immediate(), BUSY_RETRY_MS)
  }

  async insert(webhook: WebhookRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO webhooks (id, url, events, description, secret, previous_secret, previous_secret_expires_at,
           disabled_at, disabled_reason, failing_since, after_seq, created_at, updated_at)
         VALUES (@id, @url, @events, @description, @secret, @previousSecret, @previousSecretExpiresAt,
           @disabledAt, @disabledReason, @failingSince,
           (SELECT coalesce(max(seq), 0) FROM events), @createdAt, @updatedAt)`,
      )
      .run({
        id: webhook.id,
        url: webhook.url,
        events: webhook.events.join(' '),
        description: webhook.description,
        secret: webhook.secret,
        previousSecret: webhook.previousSecret,
        previousSecretExpiresAt: ms(webhook.previousSecretExpiresAt),
        disabledAt: ms(webhook.disabledAt),
        disabledReason: webhook.disabledReason,
        failingSince: ms(webhook.failingSince),
        createdAt: webhook.createdAt.getTime(),
        updatedAt: webhook.updatedAt.getTime(),
      })
  }

  /**
   * The subscription as the change left it, read in the same synchronous step as the change: read
   * later, it could show a change made meanwhile (two rotations crossing would each respond with the later
   * one's secret).
   */
  private changedWebhook(id: string, change: { changes: number }): WebhookRecord | undefined {
    if (change.changes === 0) return undefined
    return toWebhook(this.selectOne.get(id) as WebhookRow)
  }

  async find(id: string): Promise<WebhookRecord | undefined> {
    const row = this.selectOne.get(id) as WebhookRow | undefined
    return row && toWebhook(row)
  }

  async list(): Promise<WebhookRecord[]> {
    const rows = this.db.prepare('SELECT * FROM webhooks ORDER BY created_at, id').all() as WebhookRow[]
    return rows.map(toWebhook)
  }

  async update(id: string, changes: WebhookChanges): Promise<WebhookRecord | undefined> {
    const sets: string[] = []
    const values: Record<string, unknown> = { id }
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined) continue
      const column = CHANGE_COLUMNS[key as keyof WebhookChanges]
      sets.push(`${column} = @${key}`)
      values[key] = value instanceof Date ? value.getTime() : Array.isArray(value) ? value.join(' ') : value
    }
    return this.changedWebhook(
      id,
      this.db.prepare(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = @id`).run(values),
    )
  }

  async rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: Date,
    at: Date,
  ): Promise<WebhookRecord | undefined> {
    return this.changedWebhook(
      id,
      this.db
        .prepare(
          `UPDATE webhooks SET previous_secret = secret, secret = ?, previous_secret_expires_at = ?,
             updated_at = ? WHERE id = ?`,
        )
        .run(secret, previousExpiresAt.getTime(), at.getTime(), id),
    )
  }

  /**
   * The subscription's deliveries go first, in paced chunks, and then the subscription with what it
   * gained meanwhile: in one statement the cascade deleted them all on the event loop, for as long as a
   * large backlog takes. A stop midway leaves the subscription in place with
   * fewer deliveries, and the DELETE can be sent again.
   */
  async delete(id: string): Promise<boolean> {
    const deleteSome = this.db.prepare(
      'DELETE FROM webhook_deliveries WHERE rowid IN (SELECT rowid FROM webhook_deliveries WHERE webhook_id = ? LIMIT ?)',
    )
    await inChunks(() => deleteSome.run(id, CHUNK).changes)
    return this.db.prepare('DELETE FROM webhooks WHERE id = ?').run(id).changes > 0
  }

  async hasWork(): Promise<boolean> {
    return this.anyWork.get() === 1
  }

  async queueStats(): Promise<WebhookQueueStats> {
    const awaitingFanOut = this.db
      .prepare('SELECT count(*) FROM events WHERE fanned_out_at IS NULL')
      .pluck()
      .get() as number
    // Kept by triggers (migration 011): counting the table itself read every delivery.
    const rows = this.db.prepare('SELECT status, n FROM webhook_delivery_counts').all() as Array<{
      status: DeliveryStatus
      n: number
    }>
    const deliveries: Record<DeliveryStatus, number> = { pending: 0, succeeded: 0, failed: 0 }
    for (const row of rows) deliveries[row.status] = row.n
    return { awaitingFanOut, deliveries }
  }

  async listDeliveries(
    webhookId: string,
    options: { limit: number; status?: DeliveryStatus; after?: DeliveryCursor },
  ): Promise<DeliveryRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.webhook_id = @webhookId AND (@status IS NULL OR d.status = @status)
           AND (@createdAt IS NULL OR (d.created_at, d.event_seq) < (@createdAt, @eventSeq))
         ORDER BY d.created_at DESC, d.event_seq DESC LIMIT @limit`,
      )
      .all({
        webhookId,
        status: options.status ?? null,
        createdAt: options.after?.createdAt.getTime() ?? null,
        eventSeq: options.after?.eventSeq ?? null,
        limit: options.limit,
      }) as DeliveryRow[]
    return rows.map(toDelivery)
  }

  private findDelivery(webhookId: string, deliveryId: string): DeliveryRecord | undefined {
    const row = this.db
      .prepare(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.id = ? AND d.webhook_id = ?`,
      )
      .get(deliveryId, webhookId) as DeliveryRow | undefined
    return row && toDelivery(row)
  }

  async listAttempts(
    webhookId: string,
    deliveryId: string,
    options: { limit: number; after?: AttemptCursor },
  ): Promise<AttemptRecord[] | undefined> {
    // Both reads in one synchronous step: no delete can fall between them.
    const found = this.db
      .prepare('SELECT 1 FROM webhook_deliveries WHERE id = ? AND webhook_id = ?')
      .get(deliveryId, webhookId)
    if (found === undefined) return undefined
    const rows = this.db
      .prepare(
        `SELECT seq, attempted_at, duration_ms, status_code, error, body, body_truncated FROM webhook_attempts
         WHERE delivery_id = @deliveryId
           AND (@attemptedAt IS NULL OR (attempted_at, seq) < (@attemptedAt, @seq))
         ORDER BY attempted_at DESC, seq DESC LIMIT @limit`,
      )
      .all({
        deliveryId,
        attemptedAt: options.after?.attemptedAt.getTime() ?? null,
        seq: options.after?.seq ?? null,
        limit: options.limit,
      }) as AttemptRow[]
    return rows.map(toAttempt)
  }

  async requeueDelivery(
    webhookId: string,
    deliveryId: string,
    at: Date,
  ): Promise<DeliveryRecord | undefined> {
    // Read with the change, as for a subscription (see changedWebhook).
    const changed = this.db
      .prepare(`UPDATE webhook_deliveries SET ${REQUEUE} WHERE id = @deliveryId AND webhook_id = @webhookId`)
      .run({ at: at.getTime(), deliveryId, webhookId }).changes
    return changed === 0 ? undefined : this.findDelivery(webhookId, deliveryId)
  }

  /**
   * Queues the events in seq order, CHUNK at a time, each chunk its own transaction: in one statement
   * a week of events held the event loop. A stop midway has queued the first
   * ones; replaying again queues the rest (and sends the first again, as any replay does).
   */
  async replay(webhookId: string, since: Date, at: Date): Promise<number> {
    const params = { webhookId, since: since.getTime(), at: at.getTime(), after: 0, limit: CHUNK }
    // Near the first event of the period, found by seq; from it on, seq order is the events' order,
    // and the dates of the events are compared one by one.
    const first = this.times.firstSince(params.since - REPLAY_SLACK_MS)
    if (first === undefined) return 0
    params.after = first - 1
    const queueSome = this.db
      .prepare(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
         SELECT ${deliveryId('e.seq', 'w.number')}, w.id, e.seq, 'pending', 0, @at, @at
         FROM webhooks w JOIN events e ON ${TYPE_MATCHES}
         WHERE w.id = @webhookId AND e.seq > @after AND e.created_at >= @since
         ORDER BY e.seq LIMIT @limit
         ON CONFLICT (webhook_id, event_seq) DO UPDATE SET ${REQUEUE}
         RETURNING event_seq`,
      )
      .pluck()
    return inChunks(() => {
      const chunk = queueSome.all(params) as number[]
      params.after = Math.max(params.after, ...chunk)
      return chunk.length
    })
  }

  /**
   * Requeues CHUNK failed deliveries at a time, each chunk its own statement, as a replay does: a
   * requeued delivery is no longer failed, so each chunk takes the next ones.
   */
  async recover(webhookId: string, since: Date, at: Date): Promise<number> {
    const requeueSome = this.db.prepare(
      `UPDATE webhook_deliveries SET ${REQUEUE} WHERE id IN (
         SELECT id FROM webhook_deliveries INDEXED BY webhook_deliveries_failed
         WHERE webhook_id = @webhookId AND status = 'failed' AND last_attempt_at >= @since LIMIT @limit)`,
    )
    const params = { webhookId, since: since.getTime(), at: at.getTime(), limit: CHUNK }
    return inChunks(() => requeueSome.run(params).changes)
  }

  async enqueueTest(webhookId: string, event: OutboxEvent): Promise<DeliveryRecord | undefined> {
    const at = event.occurredAt.getTime()
    const insert = this.db.transaction(() => {
      // Looked up under the write lock: a subscription deleted since the caller found it (by another
      // process, say) gets no orphan event and no foreign key failure.
      if (this.selectOne.get(webhookId) === undefined) return undefined
      // Already fanned out: a test message goes to this one subscription only.
      const seq = this.db
        .prepare(
          'INSERT INTO events (type, payload, created_at, fanned_out_at, traceparent, id) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq',
        )
        .pluck()
        .get(event.type, event.payload, at, at, event.traceparent ?? null, event.id ?? null) as number
      return this.db
        .prepare(
          `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
           SELECT ${deliveryId('@seq', 'w.number')}, w.id, @seq, 'pending', 0, @at, @at
           FROM webhooks w WHERE w.id = @webhookId RETURNING id`,
        )
        .pluck()
        .get({ webhookId, seq, at }) as string
    })
    const id = insert.immediate()
    return id === undefined ? undefined : this.findDelivery(webhookId, id)
  }

  async fanOut(limit: number, at: Date): Promise<number> {
    if (this.anyAwaitingFanOut.get() === undefined) return 0
    return this.queued(() => {
      const upTo = this.lastAwaitingFanOut.get(limit) as number | null
      if (upTo === null) return 0
      const range = { upTo, at: at.getTime() }
      this.fanOutEvents.run(range)
      return this.markFannedOut.run(range).changes
    })
  }

  async claim(options: {
    owner: string
    now: Date
    leaseMs: number
    limit: number
    perWebhook: number
    inFlight: ReadonlyMap<string, number>
  }): Promise<ClaimedDelivery[]> {
    const now = options.now.getTime()
    if (options.limit <= 0 || this.anyDue.get(now) === undefined) return []
    const claimed = await this.queued(() => {
      const candidates: Array<{ id: string; next_attempt_at: number }> = []
      for (const webhookId of this.enabledWebhooks.all() as string[]) {
        const room = options.perWebhook - (options.inFlight.get(webhookId) ?? 0)
        if (room <= 0) continue
        candidates.push(...(this.dueOfWebhook.all(webhookId, now, room) as typeof candidates))
      }
      candidates.sort((a, b) => a.next_attempt_at - b.next_attempt_at || (a.id < b.id ? -1 : 1))
      const rows = candidates.slice(0, options.limit).map((c) => this.claimDetails.get(c.id) as ClaimRow)
      const until = now + options.leaseMs
      for (const row of rows) this.lease.run({ owner: options.owner, until, id: row.id })
      return rows
    })
    return claimed.map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      url: row.url,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: date(row.previous_secret_expires_at),
      eventId: row.event_id,
      eventType: row.event_type,
      payload: row.payload,
      traceparent: row.traceparent,
      attempt: row.attempts + 1,
    }))
  }

  async complete(results: AttemptResult[]): Promise<string[]> {
    if (results.length === 0) return []
    return this.queued(() => {
      const disabled: string[] = []
      for (const r of results) {
        const status: DeliveryStatus = r.ok ? 'succeeded' : r.nextAttemptAt ? 'pending' : 'failed'
        const applied = this.finish.run({
          id: r.deliveryId,
          owner: r.owner,
          status,
          next: ms(r.nextAttemptAt),
          at: r.at.getTime(),
          statusCode: r.statusCode,
          error: r.error,
          durationMs: r.durationMs,
        }).changes
        if (applied === 0) continue
        this.recordAttempt.run({
          id: r.deliveryId,
          at: r.at.getTime(),
          durationMs: r.durationMs,
          statusCode: r.statusCode,
          error: r.error,
          body: r.body,
          bodyTruncated: r.bodyTruncated ? 1 : 0,
        })
        if (r.ok) {
          this.clearFailing.run(r.webhookId)
          continue
        }
        this.startFailing.run({
          id: r.webhookId,
          at: r.at.getTime(),
          continuesSince: r.failingContinuesSince.getTime(),
        })
        const off = this.disableFailing.run({
          id: r.webhookId,
          at: r.at.getTime(),
          threshold: r.disableIfFailingSince.getTime(),
        }).changes
        if (off > 0) disabled.push(r.webhookId)
      }
      return disabled
    })
  }

  async release(owner: string, deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return
    await this.queued(() => {
      for (const id of deliveryIds) this.unlease.run({ id, owner, now: Date.now() })
    })
  }
}
