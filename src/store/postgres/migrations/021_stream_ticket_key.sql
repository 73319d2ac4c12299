-- The key stream tickets (POST /events/tickets) are signed with, shared by every instance.
CREATE TABLE stream_ticket_key (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret bytea NOT NULL
);
