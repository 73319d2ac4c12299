-- Every change on record. A plant's change keeps, in its outbox row, the facts its event does not
-- carry: the plant it changed, who made it (the Actor as JSON), the request that made it, and for an
-- update the plant as it was (a create had none; a delete's event carries the plant as it was). They
-- are written in the change's own transaction, so the feed and a plant's history read back exactly
-- what committed (change-row.ts turns a row into a change). Columns added empty cost no copy.
ALTER TABLE events ADD COLUMN plant_id INTEGER;
ALTER TABLE events ADD COLUMN actor TEXT;
ALTER TABLE events ADD COLUMN request_id TEXT;
ALTER TABLE events ADD COLUMN before TEXT;

-- Changes stored before this version keep their history: their plant is the id of the event's data.
-- json_extract reads an integer literal as a 64-bit integer, so every id stays exact. Who made them
-- was never recorded: their actor stays null.
UPDATE events SET plant_id = json_extract(payload, '$.data.id')
  WHERE type IN ('plant.created', 'plant.updated', 'plant.deleted') AND json_valid(payload);

-- A plant's history, newest first, is one descent of this index whatever the table holds; a test
-- message has no plant and no entry.
CREATE INDEX events_by_plant ON events (plant_id, seq) WHERE plant_id IS NOT NULL;

-- The retention horizon: the highest seq the retention sweep has deleted, written in the sweep's
-- transaction (maintenance.ts). A feed reader resuming below it may have missed changes that are
-- gone, and is told so. One row. A database that lost events before this version starts at the
-- highest seq it no longer holds: every seq below the next one was handed out (AUTOINCREMENT) and
-- committed, so one that is missing was deleted.
CREATE TABLE change_horizon (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq INTEGER NOT NULL
) STRICT;
INSERT INTO change_horizon (id, seq) VALUES (1, coalesce((
  SELECT max(missing) FROM (
    SELECT e.seq - 1 AS missing FROM events e
      WHERE e.seq > 1 AND NOT EXISTS (SELECT 1 FROM events p WHERE p.seq = e.seq - 1)
    UNION ALL
    SELECT s.seq FROM sqlite_sequence s
      WHERE s.name = 'events' AND s.seq > (SELECT coalesce(max(seq), 0) FROM events))), 0));
