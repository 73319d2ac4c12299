-- A delivery's id is made from its event's seq and its subscription's number (see deliveryId in
-- fan-out.ts), so the ids of new deliveries ascend: each lands on the rightmost page of the id index,
-- where a random id dirtied a random page of it. An identity never hands a number out twice, not even
-- after its subscription is deleted; the rows there already are numbered as this adds the column.
ALTER TABLE webhooks ADD COLUMN number bigint GENERATED ALWAYS AS IDENTITY UNIQUE;

-- Nothing reads deliveries by time across subscriptions: the claims and the check for due work go
-- subscription by subscription (webhook_deliveries_due_by_webhook). Each delivery's insert, lease and
-- outcome wrote an entry of this index too.
DROP INDEX webhook_deliveries_due;
