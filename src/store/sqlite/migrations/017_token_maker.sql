-- Who made a token over HTTP: another token (created_by_token_id) or a JWT's issuer and subject.
-- All null for a token made on the database host (`plantstore token create`, the bootstrap token).
ALTER TABLE tokens ADD COLUMN created_by_token_id TEXT;
ALTER TABLE tokens ADD COLUMN created_by_iss TEXT;
ALTER TABLE tokens ADD COLUMN created_by_sub TEXT;
-- A revocation reaches the tokens the revoked one made, and theirs in turn.
CREATE INDEX tokens_by_maker ON tokens (created_by_token_id) WHERE created_by_token_id IS NOT NULL;
