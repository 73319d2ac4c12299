// The loads the benchmark knows, each a wrk script in this folder.

export interface Scenario {
  name: string
  label: string
  script: string
  /** Loads POST /plants: on an empty store with one worker, measured against the durable reference. */
  creates?: boolean
  /** For a route that not every build has: run only when a GET of this path responds 2xx. */
  probe?: string
  /**
   * A page of the find scenarios: read on a store of its own holding --find-rows plants
   * (bench/find-store.ts), the path given to find.lua, and judged against the plain first page there.
   */
  find?: { path: string }
}
export const SCENARIOS: Scenario[] = [
  // Random 63-bit ids, each landing on a leaf of its own.
  { name: 'create-random', label: 'POST /plants, random ids', script: 'create.lua', creates: true },
  // Ids that ascend, as a sequence hands them out, appending to the tables' last leaves.
  {
    name: 'create-ascending',
    label: 'POST /plants, ascending ids',
    script: 'create-ascending.lua',
    creates: true,
  },
  { name: 'get', label: 'GET /plants/{id}', script: 'get.lua' },
  { name: 'list', label: 'GET /plants?limit=100', script: 'list.lua', probe: '/plants?limit=100' },
  {
    name: 'list-after',
    label: 'GET /plants?limit=100&after={id}',
    script: 'list-after.lua',
    probe: '/plants?limit=100&after=1',
  },
  // Last, so that the reads before it find the plants as they were stored.
  { name: 'update', label: 'PATCH /plants/{id}', script: 'update.lua' },
  // The pages the find scenarios compare, on their own store (bench/find.ts); the first is the one
  // the others are held to.
  ...(
    [
      ['find-plain', 'first page', '/plants?limit=100'],
      ['find-search', 'search "fern"', '/plants?q=fern&limit=100'],
      ['find-tags', 'two tags', '/plants?tag=aroid&tag=palm&limit=100'],
      ['find-updated', 'last updated', '/plants?sort=-updatedAt&limit=100'],
    ] as const
  ).map(([name, what, path]) => ({
    name,
    label: `find, ${what}: GET ${path}`,
    script: 'find.lua',
    probe: path,
    find: { path },
  })),
]

/** The page every other find page is held to. */
export const FIND_PLAIN = 'find-plain'

/** Plants stored for the find pages unless --find-rows says otherwise. */
export const FIND_ROWS = 1_000_000

/**
 * Not a load: the CLI's start-up against `node -e 0` (bench/startup.ts), measured once a run, before
 * any server starts, on a SQLite file of its own whatever the database of the loads.
 */
export const CLI_STARTUP = { name: 'cli', label: 'CLI start-up' }

/**
 * Not a wrk load either: 1000 single creates one after another on one connection against batch creates
 * of as many plants (bench/batch.ts), on an empty store of their own.
 */
export const BATCH = { name: 'batch', label: 'POST /plants/batch against single creates' }

/**
 * Not a wrk load of its own: creates on ascending ids (create-ascending.lua) with --stream-readers open
 * streams of GET /events/stream against the same creates with none, in the same rounds, and the time a
 * change takes from its create's response to the readers (bench/streams.ts), on an empty store of
 * their own.
 */
export const STREAMS = {
  name: 'create-streams',
  label: 'POST /plants, ascending ids, with open streams against none',
  script: 'create-ascending.lua',
}

/** Readers of GET /events/stream held open in the streams scenario unless --stream-readers says otherwise. */
export const STREAM_READERS = 100

/** Names that stand for several scenarios: `create` is the comparison the requirement judges. */
export const GROUPS: Record<string, string[]> = {
  create: SCENARIOS.filter((s) => s.creates).map((s) => s.name),
  find: SCENARIOS.filter((s) => s.find).map((s) => s.name),
}

// The other scenarios read or change random ones among the N plants stored first (storedIdStride), so
// at least this many exist when they run.
export const READ_ROWS = 10_000
