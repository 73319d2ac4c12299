import { readdirSync, readFileSync } from 'node:fs'

export interface Migration {
  version: number
  name: string
  sql: string
}

/** Numbered SQL files (`001_init.sql`, …) in a folder, in version order. */
export function readMigrations(dir: URL): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number.parseInt(file, 10),
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(new URL(file, dir), 'utf8'),
    }))
}

/**
 * Refuses a database that a newer release migrated: this one would otherwise serve from a schema it
 * does not know (a column it never writes, a constraint it breaks) and record nothing of it, so the
 * damage shows up only later, and only in the newer release.
 */
export function refuseNewerSchema(applied: Iterable<number>, known: Migration[]): void {
  const versions = new Set(known.map((m) => m.version))
  const unknown = [...applied].filter((v) => !versions.has(v)).sort((a, b) => a - b)
  if (unknown.length === 0) return
  const latest = Math.max(0, ...versions)
  throw new Error(
    `the database has schema version ${unknown.join(', ')}, which this plantstore does not know (it knows up to ${latest}): it was migrated by a newer release; run that release, or restore a backup taken before the upgrade`,
  )
}

/**
 * A migration refused by the database (a table or column it adds is there already, say) fails with
 * the database's own words alone, naming neither the migration nor what became of the ones before it
 * in the same run; this names both, since all of them are undone with it, which an operator midway
 * through an upgrade needs to know. The cause's code is kept, for callers that tell failures apart by it.
 */
export function migrationFailed(failed: Migration, applied: Iterable<number>, error: Error): Error {
  const version = Math.max(0, ...applied)
  const explained = new Error(
    `cannot apply migration ${failed.name} (${error.message}): the database was left as it was, at schema version ${version}`,
    { cause: error },
  )
  return Object.assign(explained, { code: (error as { code?: unknown }).code })
}
