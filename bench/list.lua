-- GET /plants?limit=100: the first page, the listing a client asks for most.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")

function init(args)
  common.set_headers()
  wrk.path = "/plants?limit=100"
end

done = common.done
