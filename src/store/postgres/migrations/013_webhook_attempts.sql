-- Every attempt of a delivery, as the dispatcher recorded its outcome, in the transaction that
-- applies that outcome to the delivery: an attempt is kept exactly when its delivery shows it. The
-- start of the receiver's answer is kept as the bytes that came, whatever their encoding (text
-- could not hold a NUL byte). They are deleted with their delivery (by retention, or with its
-- subscription); a retry or a replay keeps them.
CREATE TABLE webhook_attempts (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  error text,
  body bytea,
  body_truncated boolean NOT NULL
);

-- A delivery's attempts, newest first, a page at a time; the cascade from a deleted delivery finds
-- them through it too.
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id, attempted_at, seq);

-- A recovery takes a subscription's failed deliveries by when they failed. Only failed deliveries
-- have an entry, so the queue's own writes (inserts, leases, successes) never touch it.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, last_attempt_at)
  WHERE status = 'failed';
