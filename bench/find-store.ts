// The store the find scenarios read: FIND_ROWS plants (bench/plant-names.ts) stored through
// `plantstore import`, so that they are held exactly as the service holds plants it was given, with
// every column and index its migrations and inserts write. A million take a while to import, so on
// SQLite the seeded file is kept and copied for the next run, under a name that changes with the
// migrations, the folding and the generator: a change to any of them seeds again.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import {
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { BENCH, BIN, ROOT } from './paths.js'
import { plantLines } from './plant-names.js'
import { benchSchema } from './postgres.js'

export interface FindStore {
  url: string
  cleanup(): Promise<void>
}

/** Imports the first `rows` generated plants into the database at `url` with the CLI. */
export async function importPlants(url: string, rows: number): Promise<void> {
  const child = spawn(
    BIN,
    ['import', '-', '--format', 'jsonl', '--batch-size', '10000', '--database-url', url],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  let output = ''
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-4000)
  }
  child.stdout.setEncoding('utf8').on('data', keep)
  child.stderr.setEncoding('utf8').on('data', keep)
  const exited = once(child, 'close')
  // The import may refuse before it reads everything: its exit says why, not the broken pipe.
  child.stdin.on('error', () => {})
  for (const chunk of plantLines(rows)) {
    if (child.stdin.destroyed) break
    if (!child.stdin.write(chunk)) await Promise.race([once(child.stdin, 'drain'), exited])
  }
  child.stdin.end()
  const [code] = await exited
  if (code !== 0) throw new Error(`plantstore import exited with ${code}:\n${output}`)
}

/** What the seeded SQLite file depends on: the generator, the folding and the store's migrations. */
function sqliteKey(rows: number): string {
  const hash = createHash('sha256').update(String(rows))
  const migrations = join(ROOT, 'src', 'store', 'sqlite', 'migrations')
  const files = [
    join(BENCH, 'plant-names.ts'),
    join(ROOT, 'src', 'plants', 'fold.ts'),
    ...readdirSync(migrations)
      .sort()
      .map((name) => join(migrations, name)),
  ]
  for (const file of files) hash.update(file.slice(ROOT.length)).update(readFileSync(file))
  return hash.digest('hex').slice(0, 16)
}

/**
 * The seeded SQLite file for `rows` plants in `cacheDir`, seeded first when there is none for the
 * current key; seeded under a name of its own and renamed once complete, so that a run stopped
 * midway leaves no file that looks seeded. Files of other keys for the same count are removed.
 */
export async function seededSqlite(rows: number, cacheDir: string): Promise<string> {
  const prefix = `find-${rows}-`
  const file = join(cacheDir, `${prefix}${sqliteKey(rows)}.db`)
  if (existsSync(file)) return file
  mkdirSync(cacheDir, { recursive: true })
  const partial = `${file}.${process.pid}.partial`
  const remove = (path: string) => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
  }
  remove(partial)
  try {
    process.stderr.write(`bench: importing ${rows} plants for the find scenarios into ${file}…\n`)
    const url = `sqlite:${partial}`
    execFileSync(BIN, ['migrate', '--database-url', url], { stdio: 'ignore' })
    await importPlants(url, rows)
    // Into the file itself, so that it is whole without its log.
    const db = new Database(partial)
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
    for (const old of readdirSync(cacheDir).filter(
      (name) => name.startsWith(prefix) && name.endsWith('.db'),
    )) {
      remove(join(cacheDir, old))
    }
    renameSync(partial, file)
  } finally {
    remove(partial)
  }
  return file
}

/**
 * The find scenarios' database: a copy of the seeded SQLite file in a folder of its own, or on
 * PostgreSQL a schema of its own seeded for this run and analyzed, as autovacuum would soon after
 * a bulk load.
 */
export async function findStore(
  databaseUrl: string | undefined,
  rows: number,
  cacheDir: string,
): Promise<FindStore> {
  if (databaseUrl !== undefined) {
    const { url, client, drop } = await benchSchema(databaseUrl)
    try {
      process.stderr.write(`bench: importing ${rows} plants for the find scenarios…\n`)
      await importPlants(url, rows)
      await client.query('ANALYZE plants')
    } catch (error) {
      await drop().catch(() => {})
      throw error
    }
    return { url, cleanup: drop }
  }
  const seeded = await seededSqlite(rows, cacheDir)
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-'))
  const file = join(dir, 'bench.db')
  copyFileSync(seeded, file, constants.COPYFILE_FICLONE)
  return { url: `sqlite:${file}`, cleanup: async () => rmSync(dir, { recursive: true, force: true }) }
}
