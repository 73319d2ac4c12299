-- Listing by tag walks this index in id order, so a filtered page costs the same at any depth.
CREATE INDEX plants_tag_id ON plants (tag, id);

-- Idempotency-Key records (IETF httpapi draft), scoped to the token that sent the key. A record is
-- written in the same transaction as the plant it created, so a retry finds it if and only if the
-- create committed.
CREATE TABLE idempotency_keys (
  token_id TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (token_id, key)
) STRICT;

CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
