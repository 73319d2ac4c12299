-- An outbox row costs a create what the reference's does: one row under its integer key. The event
-- id is no longer stored with a unique index of its own: an event written from now on has none (id
-- NULL) and is known by `msg_` + its time in 12 hex digits + its seq in 14 (eventIdSql in
-- fan-out.ts), unique because a seq is never handed out twice (AUTOINCREMENT) and apart from the
-- ids of another life of the database (a restored backup) by its time. Events stored before keep
-- the id they were sent with. Nothing looks an event up by its id.
-- The time index goes too: replay and retention find a time's first event by seq (maintenance.ts,
-- firstSeqSince), since events are dated under the write lock in seq order. The partial index of
-- events awaiting fan-out stays: every event is written fanned out, so it holds no entry of them.
-- SQLite cannot drop a UNIQUE constraint: the table is copied. The migration runs with foreign keys
-- off (migrate.ts), so dropping the old table leaves the deliveries that refer to events alone.
CREATE TABLE events_lean (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  fanned_out_at INTEGER,
  traceparent TEXT,
  -- The id an event was stored with: those written before this migration, and test messages.
  id TEXT
) STRICT;
INSERT INTO events_lean (seq, type, payload, created_at, fanned_out_at, traceparent, id)
  SELECT seq, type, payload, created_at, fanned_out_at, traceparent, id FROM events ORDER BY seq;
-- The next seq stays above every seq handed out, also one whose event was deleted since.
DELETE FROM sqlite_sequence WHERE name = 'events_lean';
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'events_lean', max(seq) FROM (
    SELECT seq FROM sqlite_sequence WHERE name = 'events' UNION ALL SELECT coalesce(max(seq), 0) FROM events_lean);
DROP TABLE events;
ALTER TABLE events_lean RENAME TO events;
CREATE INDEX events_awaiting_fan_out ON events (seq) WHERE fanned_out_at IS NULL;
