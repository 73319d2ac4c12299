// A plants row as SQLite returns it with safe integers, and the plant it holds.
import type { Plant } from '../../plants/model.js'

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
