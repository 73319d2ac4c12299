-- Finding plants. Each plant keeps its name folded as search compares it (foldName in
-- src/plants/fold.ts) beside the name. The application computes it on every write, since SQL's lower()
-- differs between SQLite and PostgreSQL; here fold_name() is that same function, lent to the migrating
-- connection only (migrate.ts), so nothing in the schema depends on it. SQLite cannot add a NOT NULL
-- column without a default, and a default would let an insert that forgets the column store a plant
-- search never finds: the table is copied into one that has it.
CREATE TABLE plants_folded (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  tag TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  name_folded TEXT NOT NULL
) STRICT;
INSERT INTO plants_folded (id, name, tag, version, created_at, updated_at, name_folded)
  SELECT id, name, tag, version, created_at, updated_at, fold_name(name) FROM plants;
DROP TABLE plants;
ALTER TABLE plants_folded RENAME TO plants;
CREATE INDEX plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;

-- Each order a listing can take is one index, walked from the page's keyset position; names compare
-- as BINARY, that is by code point (UTF-8 bytes sort as their code points do).
CREATE INDEX plants_name_id ON plants (name, id);
CREATE INDEX plants_created_id ON plants (created_at, id);
CREATE INDEX plants_updated_id ON plants (updated_at, id);

-- Search: FTS5's trigram tokenizer over the folded names, case sensitive (the names are folded
-- already). A phrase query is then an exact substring match for a text of three code points or more;
-- shorter texts have no trigram and are matched by instr() over the plants instead. The index keeps
-- no copy of the names (content=plants: it reads them from the table when asked) and no sizes for
-- ranking (columnsize=0), so a create adds its trigrams and nothing else.
CREATE VIRTUAL TABLE plant_names USING fts5(
  name_folded,
  content = 'plants',
  content_rowid = 'id',
  columnsize = 0,
  tokenize = 'trigram case_sensitive 1'
);
INSERT INTO plant_names (plant_names) VALUES ('rebuild');

-- Kept in step by triggers, in the statement that writes the plant: every way a plant is written
-- (group commit, import, another connection) maintains the index, with no second statement for the
-- application to run and bind per plant. A delete must give the index the text it holds, which the
-- trigger reads from the row itself. An update that keeps the name leaves the index alone.
CREATE TRIGGER plant_names_insert AFTER INSERT ON plants BEGIN
  INSERT INTO plant_names (rowid, name_folded) VALUES (new.id, new.name_folded);
END;
CREATE TRIGGER plant_names_delete AFTER DELETE ON plants BEGIN
  INSERT INTO plant_names (plant_names, rowid, name_folded) VALUES ('delete', old.id, old.name_folded);
END;
CREATE TRIGGER plant_names_update AFTER UPDATE OF name_folded ON plants
  WHEN old.name_folded IS NOT new.name_folded BEGIN
  INSERT INTO plant_names (plant_names, rowid, name_folded) VALUES ('delete', old.id, old.name_folded);
  INSERT INTO plant_names (rowid, name_folded) VALUES (new.id, new.name_folded);
END;
