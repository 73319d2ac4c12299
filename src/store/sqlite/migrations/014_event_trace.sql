-- The W3C traceparent of the request that wrote the event, when it was traced: each webhook attempt's
-- span links back to it. Null for events written untraced.
ALTER TABLE events ADD COLUMN traceparent TEXT;
