import type { PlantChange } from '../store/types.js'

/** Limits on plant fields; the validator and the published schema both read them from here. */
export const NAME_MAX_LENGTH = 200
export const TAG_MAX_LENGTH = 100

/** A stored plant as the domain sees it: the id is exact, a missing tag is absent (never null). */
export interface Plant {
  id: bigint
  name: string
  tag?: string
}

export type NewPlant = Plant

/** The plant the change leaves, or undefined when it changes nothing (no new version, no event). */
export function changedPlant(current: Plant, change: PlantChange): Plant | undefined {
  const next: Plant = { id: current.id, name: change.name ?? current.name }
  const tag = change.tag === undefined ? current.tag : change.tag
  if (tag !== null && tag !== undefined) next.tag = tag
  return next.name === current.name && next.tag === current.tag ? undefined : next
}
