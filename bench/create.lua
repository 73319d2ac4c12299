-- POST /plants with a new random 63-bit id on every request.
-- The ids walk a full-period LCG modulo 2^64 (LuaJIT 64-bit integers); its low 63 bits are a
-- full-period LCG modulo 2^63, so no id repeats within a run, and they land all over the B-tree as
-- real random ids would, not appended at its end.
package.path = (os.getenv("BENCH_DIR") or ".") .. "/?.lua;" .. package.path
local common = require("common")
local bit = require("bit")

local MASK = 0x7FFFFFFFFFFFFFFFULL
local MUL, ADD = 6364136223846793005ULL, 1442695040888963407ULL

-- 2^56 steps of the walk at once: stepping x -> MUL*x + ADD twice is x -> MUL^2*x + (MUL+1)*ADD, so
-- 56 such squarings give the multiplier and increment of a 2^56-step jump.
local JUMP_MUL, JUMP_ADD = MUL, ADD
for _ = 1, 56 do
  JUMP_MUL, JUMP_ADD = JUMP_MUL * JUMP_MUL, (JUMP_MUL + 1ULL) * JUMP_ADD
end

local state

function init(args)
  -- Every thread starts from the run's seed, thread n then 2^56 * n steps further along the same
  -- walk: each thread's ids are a stretch of the walk no other thread of the run reaches (up to 128
  -- threads of 2^56 creates each), and the same seed gives every thread the same ids again.
  state = 0ULL + common.seed * 2654435761
  for _ = 1, common.thread() do
    state = state * JUMP_MUL + JUMP_ADD
  end
  wrk.method = "POST"
  wrk.path = "/plants"
  common.set_headers()
end

function request()
  state = state * MUL + ADD
  local id = tostring(bit.band(state, MASK)):sub(1, -4) -- drop the "ULL" suffix
  return wrk.format(nil, nil, nil, '{"id":' .. id .. ',"name":"Monstera deliciosa","tag":"aroid"}')
end

done = common.done
