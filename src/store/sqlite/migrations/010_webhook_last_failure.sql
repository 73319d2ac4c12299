-- When the subscription's latest attempt failed. A failure long after the one before (a quiet spell in
-- which nothing was tried) starts a new failing spell instead of continuing the old one.
ALTER TABLE webhooks ADD COLUMN last_failure_at INTEGER;
