// The find scenarios: the pages of GET /plants that search, filter by several tags and sort, each
// read on a store holding --find-rows plants and held to the plain first page read on the same
// store in the same rounds (bench/verdicts.ts).

import { foldName } from '../src/plants/fold.js'
import { latencyRatios, type ResultRow, type Round, settle } from './figures.js'
import { findStore } from './find-store.js'
import { fmt } from './format.js'
import { measure } from './load.js'
import type { Options } from './options.js'
import { issueToken, type Server, startService } from './processes.js'
import { FIND_PLAIN, SCENARIOS, type Scenario } from './scenarios.js'

/** A page as listed: what its check reads of each plant. */
interface Listed {
  id: string
  name: string
  tag?: string
}

/**
 * What each page must hold on the seeded store, checked once before it is measured: a build that
 * ignored the parameters would respond with the first page, measured as if it searched.
 */
const HOLDS: Record<string, (plants: Listed[]) => boolean> = {
  'find-plain': () => true,
  'find-search': (plants) => plants.every((p) => foldName(p.name).includes('fern')),
  'find-tags': (plants) => plants.every((p) => p.tag === 'aroid' || p.tag === 'palm'),
  // Imported in ascending id order, the last plants imported are the last updated, and ties are
  // broken by id in the same direction: ids descend.
  'find-updated': (plants) =>
    plants.every((p, i) => i === 0 || BigInt(p.id) < BigInt(plants[i - 1]?.id ?? 0)),
}

/** Whether the build serves the page as it means: 200, a full page, each plant as its check wants. */
async function serves(url: string, path: string, token: string, holds: (plants: Listed[]) => boolean) {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  if (!response.ok) return false
  // Ids as text: they are beyond what a double holds exactly.
  const plants = JSON.parse(text.replace(/"id":(\d+)/g, '"id":"$1"')) as Listed[]
  return plants.length > 0 && holds(plants)
}

/**
 * The find pages asked for, on one store with `workers`: each round reads every page once, in an order
 * that turns by one each round. The plain first page is always read, judged or not, since the others
 * are held to it. A page the build does not know (a parameter it refuses) is skipped.
 */
export async function measureFind(workers: string, options: Options, cacheDir: string): Promise<ResultRow[]> {
  const rows = options.findRows
  const asked = SCENARIOS.filter((s) => s.find && (s.name === FIND_PLAIN || options.scenarios.includes(s)))
  const store = await findStore(options.databaseUrl, rows, cacheDir)
  let service: Server | undefined
  const results: ResultRow[] = []
  try {
    const token = issueToken(store.url)
    service = await startService(store.url, workers)
    const pages: Scenario[] = []
    for (const page of asked) {
      if (await serves(service.url, page.find?.path as string, token, HOLDS[page.name] ?? (() => false))) {
        pages.push(page)
      } else {
        const skipped = 'this build refuses or ignores its parameters'
        results.push({ scenario: page.name, rows, workers, skipped, rounds: [], servers: {} })
      }
    }
    // One request at a time: a page's latency is its own cost. Under many connections asking the same
    // page, the plain id listing's reads are shared by every request of a turn (postgres/plants.ts),
    // which a real mix of searches would not see, and the comparison would measure that sharing.
    const ONE_AT_A_TIME: Options = { ...options, connections: 1, threads: 1 }
    const rounds = new Map(pages.map((page) => [page.name, [] as Round[]]))
    for (let round = 1; round <= options.rounds; round++) {
      const turn = (round - 1) % Math.max(pages.length, 1)
      for (const page of [...pages.slice(turn), ...pages.slice(0, turn)]) {
        process.stderr.write(
          `bench: ${page.label}, ${fmt(rows)} stored, workers ${workers}, round ${round} of ${options.rounds}\n`,
        )
        const env = { BENCH_TOKEN: token, BENCH_PATH: page.find?.path as string }
        rounds.get(page.name)?.push({ plantstore: await measure(service, page, ONE_AT_A_TIME, env) })
      }
    }
    const plainRounds = rounds.get(FIND_PLAIN)
    for (const page of pages) {
      const row = settle({ scenario: page.name, rows, workers, rounds: rounds.get(page.name) ?? [] })
      const vsPlain =
        page.name === FIND_PLAIN || !plainRounds ? undefined : latencyRatios(row.rounds, plainRounds)
      results.push(vsPlain ? { ...row, vsPlain } : row)
    }
  } finally {
    const code = await service?.stop()
    if (code !== undefined && code !== 0)
      process.stderr.write(`bench: plantstore exited with ${code} on SIGTERM\n`)
    await store.cleanup()
  }
  // In the order the scenarios are listed, skipped ones included.
  return asked.flatMap((page) => results.filter((r) => r.scenario === page.name))
}
