-- Named leases: a duty that one process at a time should carry (the webhook dispatcher) belongs to
-- whoever holds its row until expires_at. A holder renews before then; anyone may take an expired row.
CREATE TABLE leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  -- When the current holder took it (kept across renewals), to tell how long it has held it.
  acquired_at timestamptz NOT NULL
);
