// A plants row as SQLite returns it with safe integers, and the plant it holds.
import { foldName } from '../../plants/fold.js'
import type { NewPlant, Plant } from '../../plants/model.js'

export interface PlantRow {
  id: bigint
  name: string
  tag: string | null
}

export interface VersionedRow extends PlantRow {
  version: bigint
}

export function toPlant(row: PlantRow): Plant {
  return row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag }
}

/**
 * Inserts one plant's row, every column a new plant has (bound by plantRowValues); the table has no
 * default for the folded name, so an insert that forgets it fails rather than storing a plant that
 * search never finds.
 */
export const INSERT_PLANT =
  'INSERT INTO plants (id, name, name_folded, tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)'

/**
 * The values INSERT_PLANT binds, in its order: the plant, its name folded as search compares it
 * (computed here rather than by SQL, whose lower() neither store shares), created and updated `now`.
 */
export function plantRowValues(
  plant: Pick<NewPlant, 'id' | 'name'> & { tag?: string | null | undefined },
  now: number,
): [bigint, string, string, string | null, number, number] {
  return [plant.id, plant.name, foldName(plant.name), plant.tag ?? null, now, now]
}
