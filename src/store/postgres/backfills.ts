// Steps of a migration that SQL cannot take, run where the migration's file names them (migrate.ts).
import type { ClientBase } from 'pg'
import { foldName } from '../../plants/fold.js'
import { pageStart } from '../page-start.js'

/** Plants folded per round trip: a chunk's ids and names are held in memory, never the whole table. */
const CHUNK = 5000

/**
 * Writes every stored plant's folded name (foldName, as the store writes it with each change), a
 * chunk of plants at a time in id order, inside the migration's transaction.
 */
async function foldStoredNames(client: ClientBase): Promise<void> {
  let from = pageStart(undefined)
  while (from !== undefined) {
    const chunk = await client.query<{ id: string; name: string }>(
      `SELECT id::text AS id, name FROM plants WHERE id >= $1 ORDER BY id LIMIT ${CHUNK}`,
      [from.toString()],
    )
    const last = chunk.rows[chunk.rows.length - 1]
    if (last === undefined) return
    await client.query(
      `UPDATE plants SET name_folded = u.folded
       FROM unnest($1::bigint[], $2::text[]) AS u(id, folded) WHERE plants.id = u.id`,
      [chunk.rows.map((row) => row.id), chunk.rows.map((row) => foldName(row.name))],
    )
    from = chunk.rows.length < CHUNK ? undefined : pageStart(BigInt(last.id))
  }
}

/** The steps a migration names on a line of its own, `-- backfill: <name>`. */
export const BACKFILLS: Readonly<Record<string, (client: ClientBase) => Promise<void>>> = {
  name_folded: foldStoredNames,
}
