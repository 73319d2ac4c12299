import type { Pool, PoolClient } from 'pg'
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
import { guarded } from './errors.js'
import { deliveryId, eventIdSql, fanOutSql } from './fan-out.js'
import { lockOutbox } from './outbox-lock.js'
import { inTransaction } from './transaction.js'

interface WebhookRow {
  id: string
  url: string
  events: string[]
  description: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  disabled_at: Date | null
  disabled_reason: string | null
  failing_since: Date | null
  created_at: Date
  updated_at: Date
}

interface DeliveryRow {
  id: string
  webhook_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_at: Date | null
  last_attempt_at: Date | null
  last_status_code: number | null
  last_error: string | null
  last_duration_ms: number | null
  created_at: Date
  event_seq: string
}

/** A delivery's row with one of its attempts, or with nulls when it has none to show. */
interface AttemptRow {
  seq: string | null
  attempted_at: Date | null
  duration_ms: number | null
  status_code: number | null
  error: string | null
  body: Buffer | null
  body_truncated: boolean | null
}

interface ClaimRow {
  id: string
  webhook_id: string
  attempts: number
  url: string
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: Date | null
  event_id: string
  event_type: string
  payload: string
  traceparent: string | null
}

function toWebhook(row: WebhookRow): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason as WebhookDisabledReason | null,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
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
    nextAttemptAt: row.next_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastDurationMs: row.last_duration_ms,
    createdAt: row.created_at,
    eventSeq: Number(row.event_seq),
  }
}

function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    attemptedAt: row.attempted_at as Date,
    durationMs: row.duration_ms as number,
    statusCode: row.status_code,
    error: row.error,
    body: row.body,
    bodyTruncated: row.body_truncated === true,
    seq: Number(row.seq),
  }
}

// Both probes stop at the first row: the primary key, and the partial index of unfanned events.
const HAS_WORK =
  'SELECT EXISTS (SELECT 1 FROM webhooks) OR EXISTS (SELECT 1 FROM events WHERE fanned_out_at IS NULL) AS work'

/**
 * Queues a delivery again (retry, replay) with a fresh schedule, `at` being the parameter of the
 * time. One with an attempt in flight keeps that attempt's lease, so no second attempt starts beside
 * it: its next attempt stays at the lease's end, and its attempts count drops to 0 (none since the
 * requeue), which tells the attempt's completion to leave it pending and due at once. A lease that
 * ran out is due already.
 */
const requeue = (at: string) => `status = 'pending', attempts = 0, next_attempt_at = CASE
  WHEN webhook_deliveries.lease_owner IS NULL THEN ${at}::timestamptz ELSE webhook_deliveries.lease_until END`

const DELIVERY_COLUMNS = `d.id, d.webhook_id, ${eventIdSql('e')} AS event_id, e.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.last_attempt_at, d.last_status_code, d.last_error, d.last_duration_ms, d.created_at,
  d.event_seq::text AS event_seq`

/**
 * Keeps the attempts whose outcomes were applied, in the transaction that applied them: one statement
 * for the whole batch, so recording them costs one round trip, not one an attempt.
 */
async function recordAttempts(client: PoolClient, recorded: AttemptResult[]): Promise<void> {
  if (recorded.length === 0) return
  await client.query(
    `INSERT INTO webhook_attempts (delivery_id, attempted_at, duration_ms, status_code, error, body, body_truncated)
     SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::integer[], $4::integer[], $5::text[], $6::bytea[],
       $7::boolean[])`,
    [
      recorded.map((r) => r.deliveryId),
      recorded.map((r) => r.at),
      recorded.map((r) => Math.round(r.durationMs)),
      recorded.map((r) => r.statusCode),
      recorded.map((r) => r.error),
      recorded.map((r) => r.body),
      recorded.map((r) => r.bodyTruncated),
    ],
  )
}

/**
 * Subscriptions and the delivery queue in PostgreSQL, shared by the dispatchers of every instance.
 * `fanOut` and `claim` lock the rows they take with `FOR UPDATE SKIP LOCKED`: two dispatchers never
 * take the same event or delivery, and neither waits for the other. Cheap reads first check whether
 * there is work at all, so an idle dispatcher opens no transaction.
 */
export class PostgresWebhookStore implements WebhookStore {
  constructor(private readonly pool: Pool) {}

  async insert(webhook: WebhookRecord): Promise<void> {
    // Under the outbox lock, as events are written: the highest seq read here is the last committed,
    // and every batch that commits later fans its events out in a statement that sees this row.
    await inTransaction(this.pool, async (client) => {
      await lockOutbox(client)
      await client.query(
        `INSERT INTO webhooks (id, url, events, description, secret, previous_secret, previous_secret_expires_at,
           disabled_at, disabled_reason, failing_since, after_seq, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, (SELECT coalesce(max(seq), 0) FROM events), $11, $12)`,
        [
          webhook.id,
          webhook.url,
          webhook.events,
          webhook.description,
          webhook.secret,
          webhook.previousSecret,
          webhook.previousSecretExpiresAt,
          webhook.disabledAt,
          webhook.disabledReason,
          webhook.failingSince,
          webhook.createdAt,
          webhook.updatedAt,
        ],
      )
    })
  }

  async find(id: string): Promise<WebhookRecord | undefined> {
    const result = await guarded(() =>
      this.pool.query<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [id]),
    )
    const row = result.rows[0]
    return row && toWebhook(row)
  }

  async list(): Promise<WebhookRecord[]> {
    const result = await guarded(() =>
      this.pool.query<WebhookRow>('SELECT * FROM webhooks ORDER BY created_at, id'),
    )
    return result.rows.map(toWebhook)
  }

  async update(id: string, changes: WebhookChanges): Promise<WebhookRecord | undefined> {
    const sets: string[] = []
    const values: unknown[] = [id]
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined) continue
      values.push(value)
      sets.push(`${CHANGE_COLUMNS[key as keyof WebhookChanges]} = $${values.length}`)
    }
    const result = await guarded(() =>
      this.pool.query<WebhookRow>(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, values),
    )
    const row = result.rows[0]
    return row && toWebhook(row)
  }

  async rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: Date,
    at: Date,
  ): Promise<WebhookRecord | undefined> {
    const result = await guarded(() =>
      this.pool.query<WebhookRow>(
        `UPDATE webhooks SET previous_secret = secret, secret = $2, previous_secret_expires_at = $3,
           updated_at = $4 WHERE id = $1 RETURNING *`,
        [id, secret, previousExpiresAt, at],
      ),
    )
    const row = result.rows[0]
    return row && toWebhook(row)
  }

  async delete(id: string): Promise<boolean> {
    const result = await guarded(() => this.pool.query('DELETE FROM webhooks WHERE id = $1', [id]))
    return (result.rowCount ?? 0) > 0
  }

  async hasWork(): Promise<boolean> {
    const result = await guarded(() => this.pool.query<{ work: boolean }>(HAS_WORK))
    return result.rows[0]?.work === true
  }

  async queueStats(): Promise<WebhookQueueStats> {
    const [events, deliveries] = await Promise.all([
      guarded(() =>
        this.pool.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE fanned_out_at IS NULL'),
      ),
      guarded(() =>
        this.pool.query<{ status: DeliveryStatus; n: string }>(
          'SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status',
        ),
      ),
    ])
    const byStatus: Record<DeliveryStatus, number> = { pending: 0, succeeded: 0, failed: 0 }
    for (const row of deliveries.rows) byStatus[row.status] = Number(row.n)
    return { awaitingFanOut: Number(events.rows[0]?.n ?? 0), deliveries: byStatus }
  }

  async listDeliveries(
    webhookId: string,
    options: { limit: number; status?: DeliveryStatus; after?: DeliveryCursor },
  ): Promise<DeliveryRecord[]> {
    const result = await guarded(() =>
      this.pool.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.webhook_id = $1 AND ($2::text IS NULL OR d.status = $2)
           AND ($4::timestamptz IS NULL OR (d.created_at, d.event_seq) < ($4, $5::bigint))
         ORDER BY d.created_at DESC, d.event_seq DESC LIMIT $3`,
        [
          webhookId,
          options.status ?? null,
          options.limit,
          options.after?.createdAt ?? null,
          options.after?.eventSeq ?? null,
        ],
      ),
    )
    return result.rows.map(toDelivery)
  }

  private async findDelivery(webhookId: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    const result = await guarded(() =>
      this.pool.query<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.id = $1 AND d.webhook_id = $2`,
        [deliveryId, webhookId],
      ),
    )
    const row = result.rows[0]
    return row && toDelivery(row)
  }

  async listAttempts(
    webhookId: string,
    deliveryId: string,
    options: { limit: number; after?: AttemptCursor },
  ): Promise<AttemptRecord[] | undefined> {
    // One statement, so the delivery found is the one whose attempts are read: no row at all means no
    // such delivery, one row of nulls a delivery with no attempt (on this page).
    const result = await guarded(() =>
      this.pool.query<AttemptRow>(
        `SELECT a.seq::text AS seq, a.attempted_at, a.duration_ms, a.status_code, a.error, a.body, a.body_truncated
         FROM webhook_deliveries d LEFT JOIN LATERAL (
           SELECT * FROM webhook_attempts
           WHERE delivery_id = d.id
             AND ($3::timestamptz IS NULL OR (attempted_at, seq) < ($3, $4::bigint))
           ORDER BY attempted_at DESC, seq DESC LIMIT $5
         ) a ON true
         WHERE d.id = $1 AND d.webhook_id = $2
         ORDER BY a.attempted_at DESC, a.seq DESC`,
        [
          deliveryId,
          webhookId,
          options.after?.attemptedAt ?? null,
          options.after?.seq ?? null,
          options.limit,
        ],
      ),
    )
    if (result.rows.length === 0) return undefined
    return result.rows.filter((row) => row.seq !== null).map(toAttempt)
  }

  async requeueDelivery(
    webhookId: string,
    deliveryId: string,
    at: Date,
  ): Promise<DeliveryRecord | undefined> {
    const result = await guarded(() =>
      this.pool.query(`UPDATE webhook_deliveries SET ${requeue('$1')} WHERE id = $2 AND webhook_id = $3`, [
        at,
        deliveryId,
        webhookId,
      ]),
    )
    return result.rowCount === 0 ? undefined : this.findDelivery(webhookId, deliveryId)
  }

  async replay(webhookId: string, since: Date, at: Date): Promise<number> {
    // The rows are held as they are read: an event the retention sweep deletes meanwhile, or the
    // subscription itself, is passed over once that delete commits, where the new deliveries' foreign
    // keys would fail the whole replay. It requeues deliveries in event order while the dispatcher
    // records a batch of outcomes in the order the attempts ended: the two can deadlock, and the
    // replay is then run again rather than failed with 500.
    const result = await inTransaction(this.pool, (client) =>
      client.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
         SELECT ${deliveryId('e.seq', 'w.number')}, w.id, e.seq, 'pending', 0, $3, $3
         FROM webhooks w JOIN events e ON e.type = ANY (w.events)
         WHERE w.id = $1 AND e.created_at >= $2
         FOR KEY SHARE OF w, e
         ON CONFLICT (webhook_id, event_seq) DO UPDATE SET ${requeue('$3')}`,
        [webhookId, since, at],
      ),
    )
    return result.rowCount ?? 0
  }

  async recover(webhookId: string, since: Date, at: Date): Promise<number> {
    // A batch of outcomes may hold some of these rows, taken in another order: a deadlock aborts one
    // of the two, and this one is then run again rather than failed with 500 (see replay).
    const result = await inTransaction(this.pool, (client) =>
      client.query(
        `UPDATE webhook_deliveries SET ${requeue('$3')}
         WHERE webhook_id = $1 AND status = 'failed' AND last_attempt_at >= $2`,
        [webhookId, since, at],
      ),
    )
    return result.rowCount ?? 0
  }

  async enqueueTest(webhookId: string, event: OutboxEvent): Promise<DeliveryRecord | undefined> {
    const at = event.occurredAt
    const id = await inTransaction(this.pool, async (client) => {
      // Held until commit, so a delete waits for the delivery (and takes it along) rather than
      // failing its foreign key; a subscription already deleted gets no orphan event.
      const found = await client.query('SELECT 1 FROM webhooks WHERE id = $1 FOR KEY SHARE', [webhookId])
      if (found.rowCount === 0) return undefined
      // Already fanned out: a test message goes to this one subscription only. Its seq is taken in
      // commit order like any event's.
      await lockOutbox(client)
      const inserted = await client.query<{ seq: string }>(
        `INSERT INTO events (id, type, payload, created_at, fanned_out_at, traceparent)
         VALUES ($1, $2, $3, $4, $4, $5)
         RETURNING seq::text AS seq`,
        [event.id ?? null, event.type, event.payload, at, event.traceparent ?? null],
      )
      const delivery = await client.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
         SELECT ${deliveryId('$2::bigint', 'w.number')}, w.id, $2, 'pending', 0, $3, $3
         FROM webhooks w WHERE w.id = $1 RETURNING id`,
        [webhookId, inserted.rows[0]?.seq, at],
      )
      return delivery.rows[0]?.id as string
    })
    return id === undefined ? undefined : this.findDelivery(webhookId, id)
  }

  async fanOut(limit: number, at: Date): Promise<number> {
    const waiting = await guarded(() =>
      this.pool.query('SELECT 1 FROM events WHERE fanned_out_at IS NULL LIMIT 1'),
    )
    if (waiting.rowCount === 0) return 0
    return inTransaction(this.pool, async (client) => {
      const events = await client.query<{ seq: string }>(
        `SELECT seq::text AS seq FROM events WHERE fanned_out_at IS NULL
         ORDER BY events.seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      )
      if (events.rows.length === 0) return 0
      const seqs = events.rows.map((r) => r.seq)
      await client.query(fanOutSql('(SELECT seq, type FROM events WHERE seq = ANY ($1::bigint[])) e', '$2'), [
        seqs,
        at,
      ])
      await client.query('UPDATE events SET fanned_out_at = $1 WHERE seq = ANY ($2::bigint[])', [at, seqs])
      return seqs.length
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
    if (options.limit <= 0) return []
    // Only an enabled subscription's deliveries can be claimed: a disabled one's backlog must not make
    // every poll open a transaction that finds nothing to claim.
    const due = await guarded(() =>
      this.pool.query(
        `SELECT 1 FROM webhooks w WHERE w.disabled_at IS NULL AND EXISTS (
           SELECT 1 FROM webhook_deliveries d
           WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= $1) LIMIT 1`,
        [options.now],
      ),
    )
    if (due.rowCount === 0) return []
    const until = new Date(options.now.getTime() + options.leaseMs)
    const rows = await inTransaction(this.pool, async (client) => {
      // Each enabled subscription contributes at most its oldest due deliveries that fit beside its
      // attempts in flight, so a large backlog never crowds out the others; rows another dispatcher
      // holds are skipped. Rows locked here but cut by the final LIMIT stay unleased: a concurrent
      // claim passes over them only until this short transaction ends, and the next pass takes them.
      const picked = await client.query<{ id: string }>(
        `SELECT d.id FROM webhooks w
         LEFT JOIN unnest($3::text[], $5::integer[]) AS busy (webhook_id, attempts) ON busy.webhook_id = w.id
         CROSS JOIN LATERAL (
           SELECT id, next_attempt_at FROM webhook_deliveries
           WHERE webhook_id = w.id AND status = 'pending' AND next_attempt_at <= $1
           ORDER BY next_attempt_at
           LIMIT least(greatest($2::integer - coalesce(busy.attempts, 0), 0), $4::integer)
           FOR UPDATE SKIP LOCKED
         ) d
         WHERE w.disabled_at IS NULL
         ORDER BY d.next_attempt_at, d.id LIMIT $4`,
        [
          options.now,
          options.perWebhook,
          [...options.inFlight.keys()],
          options.limit,
          [...options.inFlight.values()],
        ],
      )
      if (picked.rows.length === 0) return []
      // A lease moves next_attempt_at to its end, so a leased delivery is not due until the lease runs
      // out: then another dispatcher may take it (its owner is presumed dead).
      const leased = await client.query<ClaimRow>(
        `WITH leased AS (
           UPDATE webhook_deliveries SET lease_owner = $1, lease_until = $2, next_attempt_at = $2,
             attempts = attempts + 1
           WHERE id = ANY ($3::text[])
           RETURNING id, webhook_id, attempts, event_seq, next_attempt_at
         )
         SELECT l.id, l.webhook_id, l.attempts - 1 AS attempts, w.url, w.secret, w.previous_secret,
                w.previous_secret_expires_at, ${eventIdSql('e')} AS event_id, e.type AS event_type, e.payload,
                e.traceparent
         FROM leased l JOIN webhooks w ON w.id = l.webhook_id JOIN events e ON e.seq = l.event_seq`,
        [options.owner, until, picked.rows.map((r) => r.id)],
      )
      const order = new Map(picked.rows.map((r, i) => [r.id, i]))
      return leased.rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0))
    })
    return rows.map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      url: row.url,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret_expires_at,
      eventId: row.event_id,
      eventType: row.event_type,
      payload: row.payload,
      traceparent: row.traceparent,
      attempt: row.attempts + 1,
    }))
  }

  async complete(results: AttemptResult[]): Promise<string[]> {
    if (results.length === 0) return []
    return inTransaction(this.pool, async (client) => {
      // The subscriptions first, in id order, as a DELETE of one locks it before the deliveries it
      // cascades to: taken the other way round, a delete beside a batch would deadlock and fail
      // one of them (the delete's 500, or the batch's outcomes lost and every attempt made again).
      await client.query('SELECT 1 FROM webhooks WHERE id = ANY ($1::text[]) ORDER BY id FOR NO KEY UPDATE', [
        [...new Set(results.map((r) => r.webhookId))],
      ])
      const disabled: string[] = []
      const recorded: AttemptResult[] = []
      for (const r of results) {
        const status: DeliveryStatus = r.ok ? 'succeeded' : r.nextAttemptAt ? 'pending' : 'failed'
        // No attempts counted while one was in flight means it was requeued meanwhile (see requeue):
        // the attempt is recorded, and the delivery stays pending, due at once, whatever its outcome.
        const applied = await client.query(
          `UPDATE webhook_deliveries SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE $3 END,
             next_attempt_at = CASE WHEN attempts = 0 THEN $5::timestamptz ELSE $4::timestamptz END,
             lease_owner = NULL, lease_until = NULL, last_attempt_at = $5, last_status_code = $6,
             last_error = $7, last_duration_ms = $8
           WHERE id = $1 AND lease_owner = $2`,
          [
            r.deliveryId,
            r.owner,
            status,
            r.nextAttemptAt,
            r.at,
            r.statusCode,
            r.error,
            Math.round(r.durationMs),
          ],
        )
        if (applied.rowCount === 0) continue
        recorded.push(r)
        if (r.ok) {
          await client.query(
            'UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
            [r.webhookId],
          )
          continue
        }
        await client.query(
          `UPDATE webhooks SET failing_since = CASE
               WHEN failing_since IS NULL OR last_failure_at IS NULL OR last_failure_at < $3 THEN $2
               ELSE failing_since END,
             last_failure_at = greatest(last_failure_at, $2)
           WHERE id = $1`,
          [r.webhookId, r.at, r.failingContinuesSince],
        )
        const off = await client.query(
          `UPDATE webhooks SET disabled_at = $2, disabled_reason = 'failing', updated_at = $2
           WHERE id = $1 AND disabled_at IS NULL AND failing_since <= $3`,
          [r.webhookId, r.at, r.disableIfFailingSince],
        )
        if ((off.rowCount ?? 0) > 0) disabled.push(r.webhookId)
      }
      await recordAttempts(client, recorded)
      return disabled
    })
  }

  async release(owner: string, deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return
    // Another transaction (a batch of outcomes, a replay) may take the same rows in another order: a
    // deadlock aborts one of the two, and this one is then run again rather than leaving the
    // attempts leased until their lease runs out.
    await inTransaction(this.pool, (client) =>
      client.query(
        // Due from this process's clock, the one claims compare with: the server's now() could be a
        // fraction of a millisecond (or a clock skew) ahead, and a claim right after would pass it over.
        `UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = $3,
           attempts = greatest(attempts - 1, 0)
         WHERE id = ANY ($1::text[]) AND lease_owner = $2`,
        [deliveryIds, owner, new Date()],
      ),
    )
  }
}
