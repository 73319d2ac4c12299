-- GET /plants?limit=100&after={id}: the page after a random id among the rows stored before the run
-- (common.lua). Nearly every request asks for another page, so each is read from the database:
-- the listing's own cost. list.lua asks for the first page, which the service keeps between changes.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
require("common").random_reads(function(id) return "/plants?limit=100&after=" .. id end)
