// The SQL that turns outbox events into webhook deliveries, shared by the plant store's batches
// (plants.ts), which fan out their own events in their transaction, and the dispatcher's queue
// (webhooks.ts), which fans out any event left without deliveries.

/** A delivery id: `dlv_` and 24 lowercase hex digits, from the built-in random UUID (no extension needed). */
export const NEW_DELIVERY_ID = "'dlv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)"

/**
 * Inserts one delivery per (enabled subscription, matching event) for the events of `events`, a
 * relation named `e` with `seq` and `type`, due at once and dated `at` (an expression). A
 * subscription receives the events committed after it (`after_seq`).
 *
 * `FOR KEY SHARE OF w` locks each subscription a delivery is made for until the transaction ends: a
 * subscription deleted by a transaction that committed meanwhile is skipped, and one being deleted
 * waits for this transaction and takes its deliveries along, where the foreign key would otherwise
 * fail the whole statement, and with it a batch of creates.
 */
export function fanOutSql(events: string, at: string): string {
  return `INSERT INTO webhook_deliveries (id, webhook_id, event_seq, status, attempts, next_attempt_at, created_at)
    SELECT ${NEW_DELIVERY_ID}, w.id, e.seq, 'pending', 0, ${at}, ${at}
    FROM ${events} JOIN webhooks w ON e.type = ANY (w.events)
    WHERE w.disabled_at IS NULL AND w.after_seq < e.seq
    ORDER BY e.seq
    FOR KEY SHARE OF w
    ON CONFLICT (webhook_id, event_seq) DO NOTHING`
}
