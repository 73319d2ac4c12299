-- POST /plants with ids that ascend, as ids handed out by a sequence would, where create.lua's are
-- random. Each batch of ascending ids lands on one leaf of the plants table and one of its tag
-- index, where random ids land on a leaf of their own each: the two side by side show what those
-- random leaves cost the same server.
--
-- Each thread counts up in steps of 2^11 from a random multiple of 2^31 between 2^62 and 2^62 + 2^61.
-- Every id is then a number a double holds exactly, so a server that parses JSON into doubles stores
-- the id sent, not a neighbour rounded onto it. Two threads or runs meet only if
-- their random starts fall within each other's span: a run of 100 million creates spans 2^38, and
-- starts 2^31 apart over 2^30 places make that about one chance in four million for any two.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")

local STEP = 2048ULL
local next_id

function init(args)
  math.randomseed(common.seed + common.thread())
  next_id = 4611686018427387904ULL + (0ULL + math.floor(math.random() * 1073741824)) * 2147483648ULL
  wrk.method = "POST"
  wrk.path = "/plants"
  common.set_headers()
end

function request()
  next_id = next_id + STEP
  local id = tostring(next_id):sub(1, -4) -- drop the "ULL" suffix
  return wrk.format(nil, nil, nil, '{"id":' .. id .. ',"name":"Monstera deliciosa","tag":"aroid"}')
end

done = common.done
