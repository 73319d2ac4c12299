import type { Pool } from 'pg'
import type { TokenRecord, TokenStore } from '../types.js'
import { guarded } from './errors.js'
import type { RevocationWatch } from './revocation.js'
import { inTransaction } from './transaction.js'

interface TokenRow {
  id: string
  name: string
  secret_hash: string
  scopes: string[]
  created_at: Date
  expires_at: Date | null
  last_used_at: Date | null
  revoked_at: Date | null
}

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    secretHash: row.secret_hash,
    scopes: row.scopes,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }
}

export class PostgresTokenStore implements TokenStore {
  constructor(
    private readonly pool: Pool,
    private readonly watch: RevocationWatch,
  ) {}

  async insert(token: TokenRecord): Promise<void> {
    await guarded(() =>
      this.pool.query(
        `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL)`,
        [token.id, token.name, token.secretHash, token.scopes, token.createdAt, token.expiresAt],
      ),
    )
  }

  async find(id: string): Promise<TokenRecord | undefined> {
    const result = await guarded(() => this.pool.query<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id]))
    const row = result.rows[0]
    return row && toRecord(row)
  }

  async list(): Promise<TokenRecord[]> {
    const result = await guarded(() =>
      this.pool.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id'),
    )
    return result.rows.map(toRecord)
  }

  /** Bumps the shared epoch and notifies every listening instance, both only if the revocation commits. */
  async revoke(id: string, at: Date): Promise<boolean> {
    const epoch = await inTransaction(this.pool, async (client) => {
      const changed = await client.query(
        'UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2',
        [at, id],
      )
      if (changed.rowCount === 0) return null
      const bumped = await client.query<{ value: string }>(
        "UPDATE meta SET value = value + 1 WHERE key = 'token_epoch' RETURNING value::text AS value",
      )
      const value = bumped.rows[0]?.value ?? '0'
      await client.query('SELECT pg_notify($1, $2)', [this.watch.channel, value])
      return Number(value)
    })
    if (epoch === null) return false
    this.watch.observe(epoch)
    return true
  }

  async count(): Promise<number> {
    const result = await guarded(() =>
      this.pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM tokens'),
    )
    return result.rows[0]?.n ?? 0
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    await guarded(() => this.pool.query('UPDATE tokens SET last_used_at = $1 WHERE id = $2', [at, id]))
  }

  revocationEpoch(): number {
    return this.watch.epoch
  }
}
