-- Only tagged plants are listed by tag, so only they need an entry in the tag index. With every
-- plant in it, an untagged create also wrote one more index page (its entry lands at a random place
-- among the untagged ones, as ids are random), which slowed untagged creates for nothing.
-- `tag = ?` implies `tag IS NOT NULL`, so the listing by tag uses this index as it used the old one.
DROP INDEX plants_tag_id;
CREATE INDEX plants_tag_id ON plants (tag, id) WHERE tag IS NOT NULL;
