// Loaded with `node --import` before the service (bin/plantstore), for the benchmark's
// `plantstore (no storage)` line: the SQLite plant store answers every create as created and writes
// nothing, no row, no event, no commit, no fsync. Everything else is the service as it runs: the
// HTTP exchange, the token, the body's exact parse and checks, the answer with its ETag and headers,
// the metrics. Measured beside the ceiling, it shows what the service's own work on a create reaches
// before any storage, as `reference (service schema)` shows what its storage reaches before any
// of the service's own work.
//
// The creates asked during one turn of the event loop are answered together at its end, as the store
// answers the creates of one group commit together (after their commit and fsync, which this skips).
// Answered one at a time instead, each answer went out alone and paid for waking the client alone, which
// the service beside its real store does not: it then spent about twice as long on a create
// (docs/performance-history.md, the twenty-ninth round).
//
// The service imports the same built modules (dist/), and a module is loaded once per URL, so the
// store it builds is made from the class changed here.

import { PerTurn } from '../dist/store/per-turn.js'
import { SqlitePlantStore } from '../dist/store/sqlite/plants.js'

const created = new PerTurn((answers) => {
  for (const answer of answers) answer('created')
})

SqlitePlantStore.prototype.create = function create() {
  return new Promise((resolve) => created.add(resolve))
}
