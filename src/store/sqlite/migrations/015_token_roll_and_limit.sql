-- A rolled token's previous secret (its SHA-256, as the current one) is accepted beside the new one
-- until previous_secret_expires_at; one at most, so a second roll ends the one before at once.
ALTER TABLE tokens ADD COLUMN previous_secret_hash TEXT;
ALTER TABLE tokens ADD COLUMN previous_secret_expires_at INTEGER;
-- A token's own rate limit, overriding the service-wide one: both null, or both set.
ALTER TABLE tokens ADD COLUMN rate_limit_count INTEGER;
ALTER TABLE tokens ADD COLUMN rate_limit_window_ms INTEGER;
-- The listing's order, which its pages follow.
CREATE INDEX tokens_by_creation ON tokens (created_at, id);
