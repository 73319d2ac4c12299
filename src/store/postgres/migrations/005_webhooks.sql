-- Webhook subscriptions. The secrets are kept in clear because every delivery is signed with them;
-- the API shows a secret only when it is created or rotated.
CREATE TABLE webhooks (
  id text PRIMARY KEY,
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  failing_since timestamptz,
  -- A subscription receives the events committed after it: those with a greater seq.
  after_seq bigint NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Set once an event has been turned into deliveries, in the same transaction as those deliveries.
ALTER TABLE events ADD COLUMN fanned_out_at timestamptz;
CREATE INDEX events_awaiting_fan_out ON events (seq) WHERE fanned_out_at IS NULL;
CREATE INDEX events_by_time ON events (created_at);

-- One row per (subscription, event): the unit that is sent, retried and listed. A lease
-- (lease_owner, lease_until) marks an attempt in flight so no other dispatcher sends it meanwhile.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_seq bigint NOT NULL REFERENCES events (seq),
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_owner text,
  lease_until timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  last_duration_ms integer,
  created_at timestamptz NOT NULL,
  UNIQUE (webhook_id, event_seq)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (webhook_id, next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at);
