-- The same tables as the SQLite schema, in PostgreSQL types: int64 ids are bigint, times timestamptz.
CREATE TABLE plants (
  id bigint PRIMARY KEY,
  name text NOT NULL,
  tag text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE tokens (
  id text PRIMARY KEY,
  name text NOT NULL,
  secret_hash text NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);

-- Small counters shared between instances; token_epoch moves on every revocation.
CREATE TABLE meta (
  key text PRIMARY KEY,
  value bigint NOT NULL
);

INSERT INTO meta (key, value) VALUES ('token_epoch', 0);

-- Transactional outbox: one row per change to a plant, written in the change's own transaction.
-- seq is handed out under an advisory lock held until commit, so seq order is commit order and a
-- reader that has seen seq N can never later find a row below N appear.
CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  type text NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL
);
