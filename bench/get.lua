-- GET /plants/{id} for a random id among the rows stored before the run (1..BENCH_ROWS).
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")

function init(args)
  common.seed()
  common.set_headers()
end

function request()
  return wrk.format("GET", "/plants/" .. common.random_row())
end

done = common.done
