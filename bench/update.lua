-- PATCH /plants/{id} for a random id among the rows stored before the run (common.lua), with a
-- name that differs from the last one written, so that every request changes the plant (a change
-- that changes nothing writes nothing).
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")

local count = 0

function init(args)
  math.randomseed(common.seed + common.thread())
  wrk.method = "PATCH"
  common.set_headers()
end

function request()
  count = count + 1
  local path = "/plants/" .. common.random_stored_id()
  return wrk.format(nil, path, nil, '{"name":"Monstera ' .. common.thread() .. "-" .. count .. '"}')
end

done = common.done
