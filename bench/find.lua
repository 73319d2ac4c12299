-- GET BENCH_PATH on every request: one of the find scenarios' pages (bench/scenarios.ts), the same
-- page each time, as a client asking for the first page of its listing does.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")

function init(args)
  common.set_headers()
  wrk.path = os.getenv("BENCH_PATH") or "/plants?limit=100"
end

done = common.done
