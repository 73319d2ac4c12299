-- A delivery's id is made from its event's seq and its subscription's number (see deliveryId in
-- fan-out.ts), so the ids of new deliveries ascend: each lands beside the last in the id index,
-- where a random id dirtied a random page of it, one more log frame a create when anyone subscribes.
-- A subscription's number is never given to another, not even after it is deleted: the counter lives
-- in meta, as the events' seq lives in sqlite_sequence. Every insert is numbered by the trigger.
ALTER TABLE webhooks ADD COLUMN number INTEGER;
UPDATE webhooks SET number = rowid;
CREATE UNIQUE INDEX webhooks_by_number ON webhooks (number);
INSERT INTO meta (key, value) VALUES ('webhook_number', (SELECT coalesce(max(number), 0) FROM webhooks));
CREATE TRIGGER webhook_numbered AFTER INSERT ON webhooks WHEN NEW.number IS NULL BEGIN
  UPDATE meta SET value = value + 1 WHERE key = 'webhook_number';
  UPDATE webhooks SET number = (SELECT value FROM meta WHERE key = 'webhook_number') WHERE rowid = NEW.rowid;
END;

-- Nothing reads deliveries by time across subscriptions: the claims and the check for due work go
-- subscription by subscription (webhook_deliveries_due_by_webhook). Each delivery's insert, lease and
-- outcome wrote an entry of this index too.
DROP INDEX webhook_deliveries_due;
