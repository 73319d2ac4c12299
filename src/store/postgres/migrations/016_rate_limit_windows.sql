-- Rate limits shared by the instances on this database: for each key (a token or a client address)
-- and window (aligned on the database's clock), how much of its allowance the instances have reserved
-- between them. An instance admits requests only against what it reserved, and reserves (or gives
-- back) for all its keys in one statement every short interval, never per request.
CREATE TABLE rate_limit_windows (
  key text NOT NULL,
  window_ms bigint NOT NULL,
  -- Milliseconds since the epoch on the database's clock, a multiple of window_ms.
  window_start bigint NOT NULL,
  ends_at timestamptz NOT NULL,
  -- The key's limit in this window, as the latest settlement gave it.
  max_count integer NOT NULL,
  -- Allowance reserved by the instances, used or not yet; above max_count only by the requests
  -- instances admitted before their first reservation of the window.
  reserved integer NOT NULL,
  -- The latest settlement's figures: what it admitted unreserved, asked for (or, below 0, gave back)
  -- and was granted. The settlement's upsert reads them from its proposed row.
  overdraft integer NOT NULL,
  requested integer NOT NULL,
  granted integer NOT NULL,
  PRIMARY KEY (key, window_ms, window_start)
);

-- Settlements delete windows that ended a while ago, oldest first.
CREATE INDEX rate_limit_windows_ends_at ON rate_limit_windows (ends_at);
