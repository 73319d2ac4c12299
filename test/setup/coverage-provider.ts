import { once } from 'node:events'
import { readdir, readFile, rm } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { mergeProcessCovs, type ScriptCov } from '@bcoe/v8-coverage'
import v8 from '@vitest/coverage-v8'
import type { CoverageProvider, CoverageProviderModule } from 'vitest/node'
import { CHILD_COVERAGE_DIR } from './child-coverage.js'
import { addHits, type FileData, type Tally } from './coverage-hits.js'

/**
 * Vitest's V8 coverage, with the code the tests run inside the processes they start (`serve`, the
 * CLI's commands, their worker threads) counted too: those processes write V8 coverage of the built
 * files (NODE_V8_COVERAGE, child-coverage.ts), which is mapped back to the sources through the
 * build's source maps and added to the counts of the run's own. The run's map stays the measure of
 * what there is to cover: a spawned process only adds hits, to the statements, functions and
 * branches that are the same code (coverage-hits.ts).
 */
const provider: CoverageProviderModule = {
  ...v8,
  async getProvider() {
    const base = (await v8.getProvider()) as CoverageProvider & Remapper
    const generate = base.generateCoverage.bind(base)
    base.generateCoverage = async (context) => {
      const map = (await generate(context)) as CoverageMap
      const ran = await addChildCoverage(map, base)
      // Every whole run starts servers and commands; none counted means their coverage went missing.
      if (ran === 0 && context.allTestsRun) {
        throw new Error(`no spawned process wrote coverage of the build to ${CHILD_COVERAGE_DIR}`)
      }
      return map
    }
    return base
  },
}
export default provider

/**
 * The provider's own conversion of V8 coverage to Istanbul's, through a file's source map. It is not
 * part of vitest's published API: a vitest that renamed it would fail the coverage step, not skip it.
 */
interface Remapper {
  remapCoverage(
    url: string,
    wrapperLength: number,
    sources: { code: string; map?: unknown },
    functions: ScriptCov['functions'],
  ): Promise<Record<string, FileData>>
}

interface CoverageMap {
  files(): string[]
  fileCoverageFor(file: string): { data: FileData }
}

const BUILD = pathToFileURL(resolve('dist')).href

/** Counts the spawned processes' coverage into `map`; returns how many built files they ran. */
async function addChildCoverage(map: CoverageMap, remapper: Remapper): Promise<number> {
  const began = performance.now()
  const { scripts: built, unreadable } = await readChildCoverage()
  const counted = new Set(map.files())
  const tally: Tally = { hits: 0, matched: 0 }
  // Nothing else reads them, and a whole run's come to gigabytes.
  await rm(CHILD_COVERAGE_DIR, { recursive: true, force: true })
  for (const script of built) {
    const path = fileURLToPath(script.url)
    // The build's plain JavaScript files (worker threads' entry points) have no map and are not counted.
    const mapText = await readFile(`${path}.map`, 'utf8').catch(() => null)
    if (mapText === null) continue
    const code = await readFile(path, 'utf8')
    const sourceMap = JSON.parse(mapText) as { sources: string[] }
    // The provider resolves a map's sources as URLs; the build's are relative to the map.
    sourceMap.sources = sourceMap.sources.map((source) => pathToFileURL(resolve(dirname(path), source)).href)
    const converted = await remapper.remapCoverage(script.url, 0, { code, map: sourceMap }, script.functions)
    for (const [file, data] of Object.entries(converted)) {
      if (!counted.has(file)) continue
      addHits(map.fileCoverageFor(file).data, data, tally)
    }
  }
  process.stdout.write(
    `Coverage of spawned processes: ${built.length} built files ran; ${tally.matched} of ${tally.hits} ` +
      "statements, functions and branches they ran were found in the run's own map" +
      (unreadable > 0 ? `; ${unreadable} processes' coverage was cut short and not counted` : '') +
      ` (${((performance.now() - began) / 1000).toFixed(1)} s)\n`,
  )
  return built.length
}

/**
 * Every spawned process's coverage of the build, merged into one count per file, and how many files
 * could not be read: a process killed while it wrote its coverage leaves it cut short. Read by a few
 * worker threads at once (child-coverage-reader.mjs): the run's other work is done by then.
 */
async function readChildCoverage(): Promise<{ scripts: ScriptCov[]; unreadable: number }> {
  const names = await readdir(CHILD_COVERAGE_DIR).catch(() => [])
  const files = names.filter((n) => n.endsWith('.json')).map((n) => resolve(CHILD_COVERAGE_DIR, n))
  const threads = Math.max(1, Math.min(availableParallelism(), 4, files.length))
  const shares = Array.from({ length: threads }, (_, i) => files.filter((_, j) => j % threads === i))
  const read = await Promise.all(
    shares.map(async (share) => {
      const worker = new Worker(new URL('./child-coverage-reader.mjs', import.meta.url), {
        workerData: { files: share, build: BUILD },
      })
      const [answer] = (await once(worker, 'message')) as [{ scripts: ScriptCov[]; unreadable: number }]
      await worker.terminate()
      return answer
    }),
  )
  return {
    scripts: mergeProcessCovs(read.map(({ scripts }) => ({ result: scripts }))).result,
    unreadable: read.reduce((sum, { unreadable }) => sum + unreadable, 0),
  }
}
