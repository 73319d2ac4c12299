-- Listing by tag walks this index in id order, so a filtered page costs the same at any depth.
CREATE INDEX plants_tag_id ON plants (tag, id);

-- Idempotency-Key records (IETF httpapi draft), scoped to the token that sent the key. A record is
-- written in the same transaction as the plant it created, so a retry on any instance finds it if
-- and only if the create committed.
CREATE TABLE idempotency_keys (
  token_id text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  status integer NOT NULL,
  body text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (token_id, key)
);

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
