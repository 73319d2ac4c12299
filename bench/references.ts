// The reference servers measured beside the service for creates on an empty store: what the storage
// design alone reaches on this machine, and what the service's own work alone does.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Measured } from './figures.js'
import { type LoadShape, measure } from './load.js'
import { BENCH, BIN } from './paths.js'
import { issueToken, type Server, startProcess, startService } from './processes.js'
import type { Scenario } from './scenarios.js'

/**
 * A reference server of the benchmark: bench/reference.mjs with its arguments, or the service itself
 * with a module loaded before it (`node --import`).
 */
export type Reference = {
  name: string
  /** What the `for scale` line under the verdicts calls it. */
  scale: string
} & (
  | {
      args: string[]
      /** Its database is made by the service's own migrations first. */
      migrated?: boolean
    }
  | {
      /** The module imported first; the service migrates its database as it opens it. */
      service: string
    }
)

/** The references measured for creates on an empty store with one worker, in this order. */
export const REFERENCES: Reference[] = [
  { name: 'reference', scale: 'durable group commit alone (bench/reference.mjs)', args: [] },
  {
    name: 'reference (service schema)',
    scale: "the same, writing the service's rows and indexes (bench/reference.mjs --schema service)",
    args: ['--schema', 'service'],
    migrated: true,
  },
  {
    name: 'reference (service schema, not durable)',
    scale: "the same with no fsync and no checkpoint, SQLite's own work on the rows alone (--sync off)",
    args: ['--schema', 'service', '--sync', 'off'],
    migrated: true,
  },
  {
    name: 'plantstore (no storage)',
    scale: "the service answering each turn's creates together, storing none (bench/no-store.mjs)",
    service: join(BENCH, 'no-store.mjs'),
  },
]

export async function measureReference(
  spec: Reference,
  scenario: Scenario,
  shape: LoadShape,
  env: Record<string, string>,
  token: string,
): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-reference-'))
  const database = join(dir, 'reference.db')
  let reference: Server
  let own = token
  if ('service' in spec) {
    // The service checks tokens against its own database, so it gets a token of its own.
    own = issueToken(`sqlite:${database}`)
    reference = await startService(`sqlite:${database}`, '1', ['--import', spec.service])
  } else {
    if (spec.migrated) {
      execFileSync(BIN, ['migrate', '--database-url', `sqlite:${database}`], { stdio: 'ignore' })
    }
    reference = await startProcess(process.execPath, [
      join(BENCH, 'reference.mjs'),
      '--token',
      token,
      '--database',
      database,
      ...spec.args,
    ])
  }
  try {
    return await measure(reference, scenario, shape, { ...env, BENCH_TOKEN: own })
  } finally {
    await reference.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
