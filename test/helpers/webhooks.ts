import { PostgresStore } from '../../src/store/postgres/index.js'
import { SqliteStore } from '../../src/store/sqlite/index.js'
import type { OutboxEvent, Store, WebhookRecord } from '../../src/store/types.js'

/** A subscription stored directly, for tests of what the store and metrics do with its deliveries. */
export function subscriptionRecord(id: string, createdAt: Date, events = ['plant.created']): WebhookRecord {
  return {
    id,
    url: 'https://receiver.example/hook',
    events,
    description: null,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt,
    updatedAt: createdAt,
  }
}

/**
 * Stores an outbox event that no transaction fanned out, as an earlier version of either store left
 * them (each now fans a plant's event out in the transaction that writes it), for the dispatcher's
 * fan-out, the metrics and retention to find.
 */
export async function insertUnfannedEvent(store: Store, event: OutboxEvent): Promise<void> {
  if (store instanceof SqliteStore) {
    store.db
      .prepare('INSERT INTO events (id, type, payload, created_at) VALUES (?, ?, ?, ?)')
      .run(event.id, event.type, event.payload, event.occurredAt.getTime())
  } else if (store instanceof PostgresStore) {
    await store.pool.query('INSERT INTO events (id, type, payload, created_at) VALUES ($1, $2, $3, $4)', [
      event.id,
      event.type,
      event.payload,
      event.occurredAt,
    ])
  } else throw new Error(`no way to store an unfanned event in ${store.kind}`)
}

/** How many webhook attempts the store keeps, over every delivery: what deletes must leave none of. */
export async function attemptsStored(store: Store): Promise<number> {
  if (store instanceof SqliteStore) {
    return store.db.prepare('SELECT count(*) FROM webhook_attempts').pluck().get() as number
  }
  if (store instanceof PostgresStore) {
    const result = await store.pool.query<{ n: string }>('SELECT count(*) AS n FROM webhook_attempts')
    return Number(result.rows[0]?.n)
  }
  throw new Error(`no way to count the attempts in ${store.kind}`)
}
