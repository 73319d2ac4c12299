-- An outbox row costs a create what the reference's does: one row under its integer key, as in the
-- SQLite store (its migration 016). The event id is no longer stored with a unique index of its own:
-- an event written from now on has none (id NULL) and is known by `msg_` + its time in 12 hex digits
-- + its seq in 14 (eventIdSql in fan-out.ts), unique because an identity never hands a seq out twice,
-- and apart from the ids of another life of the database (a restored dump) by its time. Events stored
-- before keep the id they were sent with. Nothing looks an event up by its id.
ALTER TABLE events DROP CONSTRAINT events_id_key;
ALTER TABLE events ALTER COLUMN id DROP NOT NULL;
-- Replays find events by time. A BRIN index summarizes ranges of the table's pages, which follow seq
-- and so the events' dates: a create's row adds no entry (its range is summarized later, by vacuum),
-- where the B-tree took one per event. It stays exact: each page range found is read and rechecked.
DROP INDEX events_by_time;
CREATE INDEX events_by_time ON events USING brin (created_at) WITH (autosummarize = on);
-- The partial index of events awaiting fan-out stays: every event is written fanned out, so it holds
-- no entry of them.
