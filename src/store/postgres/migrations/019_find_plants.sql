-- Finding plants. Each plant keeps its name folded as search compares it (foldName in
-- src/plants/fold.ts) beside the name. The application computes it on every write, since SQL's lower()
-- differs between SQLite and PostgreSQL; the plants already stored are folded by that same function,
-- a chunk at a time, where the backfill line below stands (see migrate.ts). The column has no default:
-- an insert that forgets it fails rather than storing a plant that search never finds.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
ALTER TABLE plants ADD COLUMN name_folded text;
-- backfill: name_folded
ALTER TABLE plants ALTER COLUMN name_folded SET NOT NULL;

-- Search: a trigram index over the folded names, which serves `name_folded LIKE '%…%'` (the text's
-- %, _ and \ escaped). The operator class is named with the schema the extension is in, which need
-- not be on the search path (one database may hold several deployments, each in its own schema).
DO $$
DECLARE
  trgm name := (SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                WHERE e.extname = 'pg_trgm');
BEGIN
  EXECUTE format('CREATE INDEX plants_name_folded ON plants USING gin (name_folded %I.gin_trgm_ops)', trgm);
END
$$;

-- Each order a listing can take is one index, walked from the page's keyset position. Names compare
-- by code point (COLLATE "C": UTF-8 bytes sort as their code points do), as SQLite's BINARY does,
-- whatever the database's own collation.
CREATE INDEX plants_name_id ON plants (name COLLATE "C", id);
CREATE INDEX plants_created_id ON plants (created_at, id);
CREATE INDEX plants_updated_id ON plants (updated_at, id);
