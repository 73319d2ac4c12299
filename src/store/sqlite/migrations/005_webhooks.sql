-- Webhook subscriptions. The secrets are kept in clear because every delivery is signed with them;
-- the API shows a secret only when it is created or rotated.
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  -- Event types, space separated.
  events TEXT NOT NULL,
  description TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at INTEGER,
  disabled_at INTEGER,
  disabled_reason TEXT,
  failing_since INTEGER,
  -- A subscription receives the events committed after it: those with a greater seq.
  after_seq INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Set once an event has been turned into deliveries, in the same transaction as those deliveries.
ALTER TABLE events ADD COLUMN fanned_out_at INTEGER;
CREATE INDEX events_awaiting_fan_out ON events (seq) WHERE fanned_out_at IS NULL;
CREATE INDEX events_by_time ON events (created_at);

-- One row per (subscription, event): the unit that is sent, retried and listed. A lease
-- (lease_owner, lease_until) marks an attempt in flight so no other dispatcher sends it meanwhile.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_seq INTEGER NOT NULL REFERENCES events (seq),
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_owner TEXT,
  lease_until INTEGER,
  last_attempt_at INTEGER,
  last_status_code INTEGER,
  last_error TEXT,
  last_duration_ms INTEGER,
  created_at INTEGER NOT NULL,
  UNIQUE (webhook_id, event_seq)
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at);
