import type { TokenMaker } from './types.js'

// A token's maker in the tokens table's three columns, the same in both stores.

interface MakerRow {
  created_by_token_id: string | null
  created_by_iss: string | null
  created_by_sub: string | null
}

export function makerOf(row: MakerRow): TokenMaker | null {
  if (row.created_by_token_id !== null) return { tokenId: row.created_by_token_id }
  if (row.created_by_iss !== null && row.created_by_sub !== null)
    return { iss: row.created_by_iss, sub: row.created_by_sub }
  return null
}

/** created_by_token_id, created_by_iss, created_by_sub, in that order. */
export function makerColumns(
  maker: TokenMaker | null | undefined,
): [string | null, string | null, string | null] {
  if (!maker) return [null, null, null]
  return 'tokenId' in maker ? [maker.tokenId, null, null] : [null, maker.iss, maker.sub]
}
