-- GET /plants/{id} for a random id among the rows stored before the run (common.lua).
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
require("common").random_reads(function(id) return "/plants/" .. id end)
