-- Deleting an event checks the deliveries that refer to it (foreign key and retention), by event.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_seq);
