-- The key stream tickets (POST /events/tickets) are signed with, shared by every process on the file.
CREATE TABLE stream_ticket_key (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  secret BLOB NOT NULL
);
