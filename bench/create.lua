-- POST /plants with a new random 63-bit id on every request.
-- The ids walk a full-period LCG modulo 2^64 (LuaJIT 64-bit integers); its low 63 bits are a
-- full-period LCG modulo 2^63, so no id repeats within a run, and they land all over the B-tree as
-- real random ids would, not appended at its end.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")
local bit = require("bit")

local MASK = 0x7FFFFFFFFFFFFFFFULL
local state

function init(args)
  local seed = os.getenv("BENCH_SEED") or tostring(os.time())
  state = 0ULL + tonumber(seed) * 2654435761 + math.floor(os.clock() * 1e6)
  wrk.method = "POST"
  wrk.path = "/plants"
  common.set_headers()
end

function request()
  state = state * 6364136223846793005ULL + 1442695040888963407ULL
  local id = tostring(bit.band(state, MASK)):sub(1, -4) -- drop the "ULL" suffix
  return wrk.format(nil, nil, nil, '{"id":' .. id .. ',"name":"Monstera deliciosa","tag":"aroid"}')
end

done = common.done
