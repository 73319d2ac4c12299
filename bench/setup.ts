// Each setup's database: a fresh SQLite file, or a schema of its own in the PostgreSQL database given,
// with the plants stored beforehand.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { BIN } from './paths.js'
import { benchSchema } from './postgres.js'

/**
 * The stored plants' ids: the x-th of n (x from 1) has id x × ⌊(2^63 − 1) ÷ n⌋. They spread evenly
 * over the positive int64 range, as random ids do, so the creates' random ids land among them, in
 * the leaves they fill, rather than all past them; common.lua makes the same ids for the scripts
 * that read or change stored plants.
 */
const storedIdStride = (n: number): bigint => (2n ** 63n - 1n) / BigInt(n)

export interface Setup {
  url: string
  /** Stores n plants (those not there yet), the way a large store would hold them (storedIdStride). */
  fill(n: number): Promise<void>
  cleanup(): Promise<void>
}

/** A fresh database for one setup: a schema of the PostgreSQL database given, or a SQLite file. */
export async function freshDatabase(databaseUrl: string | undefined): Promise<Setup> {
  if (databaseUrl !== undefined) {
    const { url, client, drop } = await benchSchema(databaseUrl)
    return {
      url,
      // In a random order, as on SQLite (below): a B-tree grown in id order packs its leaves.
      fill: async (n) => {
        await client.query(
          `INSERT INTO plants (id, name, name_folded, tag, created_at, updated_at)
           SELECT x * $2::bigint, 'plant ' || x, 'plant ' || x, CASE WHEN x % 2 = 0 THEN 'bench' END, now(), now()
           FROM generate_series(1, $1::bigint) AS x ORDER BY random() ON CONFLICT (id) DO NOTHING`,
          [n, storedIdStride(n).toString()],
        )
      },
      cleanup: drop,
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'plantstore-bench-'))
  const file = join(dir, 'bench.db')
  const url = `sqlite:${file}`
  execFileSync(BIN, ['migrate', '--database-url', url], { stdio: 'ignore' })
  return {
    url,
    fill: async (n) => {
      const db = new Database(file)
      db.pragma('busy_timeout = 10000')
      // The tables' pages stay in memory while the rows go in out of order (a million in seconds).
      db.pragma('cache_size = -524288')
      const now = Date.now()
      // One statement, one transaction, the rows in a random order: stored in id order they would pack
      // the plants' leaves full, so that nearly every leaf split at its first create; stored at random
      // they leave room in each leaf, as a store grown by random creates does. The names are folded
      // already (lower-case ASCII), so each is its own folded name.
      db.prepare(
        `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
         INSERT OR IGNORE INTO plants (id, name, name_folded, tag, created_at, updated_at)
         SELECT x * ?, 'plant ' || x, 'plant ' || x, CASE WHEN x % 2 = 0 THEN 'bench' END, ?, ?
         FROM n ORDER BY random()`,
      ).run(n, storedIdStride(n), now, now)
      db.close()
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

/** Whether the route exists on this build: a missing route responds 404 or 405. */
export async function routeExists(url: string, path: string, token: string): Promise<boolean> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.ok
}
