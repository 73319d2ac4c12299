// Loaded with `node --import` before the service (bin/plantstore), for the benchmark's
// `plantstore (no storage)` line: the SQLite plant store answers every create as created and writes
// nothing, no row, no event, no commit, no fsync. Everything else is the service as it runs: the
// HTTP exchange, the token, the body's exact parse and checks, the answer with its ETag and headers,
// the metrics. Measured beside the ceiling, it shows what the service's own work on a create reaches
// before any storage, as `reference (service schema)` shows what its storage reaches before any
// of the service's own work.
//
// The service imports the same built module (dist/), and a module is loaded once per URL, so the
// store it builds is made from the class changed here.
import { SqlitePlantStore } from '../dist/store/sqlite/plants.js'

SqlitePlantStore.prototype.create = function create() {
  return Promise.resolve('created')
}
