// The SQL that turns outbox events into webhook deliveries, shared by the plant store's batches
// (plants.ts), which fan out their own events in their transaction, and the dispatcher's queue
// (webhooks.ts), which fans out any event left without deliveries.

/**
 * The id of the delivery of event `seq` to the subscription numbered `number` (SQL expressions):
 * `dlv_`, the seq in 14 hex digits, the number in 10, as the SQLite store makes it. One delivery
 * exists per (subscription, event), and no two subscriptions share a number, so no two deliveries
 * share an id; and new ids ascend, each on the rightmost page of the id index rather than a random
 * one. `lpad` would cut a longer value short, but neither field gets near its width: 2^56 events,
 * 2^40 subscriptions. Older deliveries may hold random ids of the same shape.
 */
export function deliveryId(seq: string, number: string): string {
  return `'dlv_' || lpad(to_hex(${seq}), 14, '0') || lpad(to_hex(${number}), 10, '0')`
}

/**
 * The id of the event `e` (the Standard Webhooks `webhook-id`), an SQL expression, as the SQLite
 * store makes it: the one it was stored with (events written before migration 018, and test
 * messages), or else `msg_`, its time in milliseconds in 12 hex digits and its seq in 14. A seq is
 * never handed out twice, so no two events of a database share an id, and the time keeps an event of
 * a restored dump apart from the one sent earlier under its seq.
 */
export function eventIdSql(e: string): string {
  return `coalesce(${e}.id, 'msg_' || lpad(to_hex(floor(extract(epoch FROM ${e}.created_at) * 1000)::bigint), 12, '0') || lpad(to_hex(${e}.seq), 14, '0'))`
}

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
    SELECT ${deliveryId('e.seq', 'w.number')}, w.id, e.seq, 'pending', 0, ${at}, ${at}
    FROM ${events} JOIN webhooks w ON e.type = ANY (w.events)
    WHERE w.disabled_at IS NULL AND w.after_seq < e.seq
    ORDER BY e.seq
    FOR KEY SHARE OF w
    ON CONFLICT (webhook_id, event_seq) DO NOTHING`
}
