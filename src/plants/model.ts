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
