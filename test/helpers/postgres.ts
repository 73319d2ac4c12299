import { randomBytes } from 'node:crypto'
import pg from 'pg'

/** The server the PostgreSQL suite runs against; unset means that suite is skipped (failed under CI). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined

/** Databases of this run share a prefix, so the run's teardown drops exactly its own. */
export function runPrefix(): string {
  return `plantstore_t_${process.env.PLANTSTORE_TEST_RUN ?? 'local'}_`
}

export function withDatabase(url: string, database: string): string {
  const next = new URL(url)
  next.pathname = `/${database}`
  return next.toString()
}

/** Runs statements on the server's maintenance connection (the TEST_DATABASE_URL database). */
export async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * Runs `work` while another session holds `tables` in ACCESS EXCLUSIVE mode (every query on them
 * waits), then releases them, whether `work` succeeded or not.
 */
export function whileLocked<T>(
  url: string,
  tables: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  return admin(url, async (client) => {
    await client.query('BEGIN')
    await client.query(`LOCK TABLE ${tables} IN ACCESS EXCLUSIVE MODE`)
    try {
      return await work(client)
    } finally {
      await client.query('ROLLBACK')
    }
  })
}

/** Creates a new, empty database and returns its URL. */
export async function createDatabase(url: string): Promise<string> {
  const name = `${runPrefix()}${randomBytes(6).toString('hex')}`
  await admin(url, (c) => c.query(`CREATE DATABASE ${name}`))
  return withDatabase(url, name)
}

/**
 * Drops every database whose name starts with the prefix, even with sessions still open. Each drop
 * waits for a checkpoint, so a few run side by side.
 */
export async function dropDatabases(url: string, prefix: string, parallel = 6): Promise<number> {
  const names = await admin(url, async (c) => {
    const found = await c.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname ~ '^[a-z0-9_]+$'",
      [prefix],
    )
    return found.rows.map((r) => r.datname)
  })
  const queue = [...names]
  await Promise.all(
    Array.from({ length: parallel }, () =>
      admin(url, async (c) => {
        for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
          await dropForcing(c, name)
        }
      }),
    ),
  )
  return names.length
}

/**
 * FORCE ends the database's sessions, but one of another role is refused (42501) unless the role may
 * signal it: an autovacuum worker that happens to be in the database is one. It ends within moments.
 */
async function dropForcing(c: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      return
    } catch (error) {
      if ((error as { code?: string }).code !== '42501' || attempt === 20) throw error
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}

/**
 * Resolves once a statement matching `pattern` (a LIKE pattern) waits on a lock in the database at
 * `url`: the moment a test that forces two transactions to cross takes its second step. Asked from a
 * session of its own, since one inside a transaction sees the activity of its first look only.
 */
export async function waitingOnLock(url: string, pattern: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const waiting = await admin(url, (c) =>
      c.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
           AND wait_event_type = 'Lock' AND query LIKE $1`,
        [pattern],
      ),
    )
    if (waiting.rowCount === 1) return
    if (Date.now() > deadline)
      throw new Error(`no statement like ${pattern} waited on a lock within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
