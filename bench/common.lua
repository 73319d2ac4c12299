-- Shared by the wrk scripts: the bearer token comes from the environment, and done() prints one
-- JSON line the benchmark runner reads (wrk's own text report is for people).
local M = {}

M.token = os.getenv("BENCH_TOKEN") or ""

-- The read scripts pick among the rows stored before the run: the x-th of them (x from 1 to
-- BENCH_ROWS) has id x * stride, stride = floor((2^63 - 1) / BENCH_ROWS), spread over the positive
-- int64 range as random ids are (bench/run.ts stores them so).
M.rows = tonumber(os.getenv("BENCH_ROWS") or "1")
local stride = 0x7FFFFFFFFFFFFFFFULL / (0ULL + M.rows)

-- The id of the x-th stored row, as decimal digits.
function M.stored_id(x)
  return tostring(stride * x):sub(1, -4) -- drop the "ULL" suffix
end

-- The id of a random stored row.
function M.random_stored_id()
  return M.stored_id(math.random(1, M.rows))
end

-- The run's seed: the runner gives each run one of its own.
M.seed = tonumber(os.getenv("BENCH_SEED") or tostring(os.time()))

-- Every wrk thread loads the script in a Lua state of its own with the same environment, so each
-- would draw the same ids in the same order. wrk calls setup() in its main state once per thread,
-- before that thread's init, and thread:set gives the thread a global: threads are numbered 0, 1, …
local threads = 0
function setup(thread)
  thread:set("bench_thread", threads)
  threads = threads + 1
end

-- This thread's number (0 in a script run without setup).
function M.thread()
  return bench_thread or 0
end

-- Each thread draws from a seed of its own, the run's plus its number: a rerun with the same
-- BENCH_SEED repeats every thread's ids.
local function seed()
  math.randomseed(M.seed + M.thread())
end

-- Makes the calling script a read script: wrk's init, request and done (globals, which wrk looks up)
-- GET path_of(id) for a random stored id on every request.
function M.random_reads(path_of)
  function init(args)
    seed()
    M.set_headers()
  end
  function request()
    return wrk.format("GET", path_of(M.random_stored_id()))
  end
  done = M.done
end

-- Added to wrk.headers rather than replacing it, which would drop the Host header wrk puts there.
function M.set_headers()
  wrk.headers["Authorization"] = "Bearer " .. M.token
  wrk.headers["Content-Type"] = "application/json"
end

function M.done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\nBENCH_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latencyUs":{"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end

return M
