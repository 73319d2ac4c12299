// What both stores make of a listing's query before building their SQL: the order, the search text
// folded as the names it is compared with, and a time key read back as the integer it was given as.
import { foldName } from '../plants/fold.js'
import type { PlantOrder } from './types.js'

/** A listing's order when its query names none. */
export const ID_ORDER: PlantOrder = { field: 'id', descending: false }

/**
 * Texts shorter than this, in code points, hold no trigram: a trigram index cannot find them, and the
 * stores match them by scanning the plants instead (see docs/decisions.md).
 */
export const TRIGRAM_LENGTH = 3

/** The text a search looks for, folded as the names are (foldName), and whether it holds a trigram. */
export interface SearchText {
  folded: string
  trigrams: boolean
}

export function searchText(text: string): SearchText {
  const folded = foldName(text)
  let length = 0
  for (const _ of folded) if (++length >= TRIGRAM_LENGTH) break
  return { folded, trigrams: length >= TRIGRAM_LENGTH }
}

/**
 * A createdAt or updatedAt key as the integer it stands for (a count since the epoch, in the store's
 * unit), parsed exactly; a key that is no integer is refused rather than compared as something else.
 */
export function integerKey(key: string | undefined): bigint {
  if (key === undefined || !/^-?\d{1,19}$/.test(key)) throw new Error(`not a time key: ${String(key)}`)
  return BigInt(key)
}
