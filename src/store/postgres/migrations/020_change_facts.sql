-- Every change on record. A plant's event row also keeps who made the change (the Actor as JSON
-- text), the X-Request-Id of the response that made it, the plant's id, and for an update the plant
-- as it was (JSON text): the change feed and a plant's history read them back. Null in rows written
-- before; adding a column without a default rewrites no row.
ALTER TABLE events
  ADD COLUMN plant_id bigint,
  ADD COLUMN actor text,
  ADD COLUMN request_id text,
  ADD COLUMN before text;

-- The plant events already stored name their plant in their payload's data. The json type keeps a
-- number's text as written, and text to bigint is exact: the id never passes through a float.
UPDATE events SET plant_id = (payload::json -> 'data' ->> 'id')::bigint
WHERE type IN ('plant.created', 'plant.updated', 'plant.deleted');

-- A plant's history, newest first. Only plant changes have a plant: a webhook's test message adds no entry.
CREATE INDEX events_by_plant ON events (plant_id, seq) WHERE plant_id IS NOT NULL;

-- The highest seq the retention sweep has deleted: a feed reader resuming below it may have missed
-- changes that are gone. One row, moved forward in the sweep's own transaction.
CREATE TABLE retention_horizon (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  seq bigint NOT NULL
);
-- A database that lost events before this version starts below the oldest it still holds, or at the
-- last seq handed out when it holds none. A seq missing among those kept may be a transaction that
-- rolled back rather than one retention deleted, so the horizon never passes an event still stored.
INSERT INTO retention_horizon (seq) VALUES (coalesce(
  (SELECT min(seq) - 1 FROM events),
  pg_sequence_last_value(pg_get_serial_sequence('events', 'seq')::regclass),
  0));
