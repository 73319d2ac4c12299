import type { Pool, PoolClient } from 'pg'
import { makerColumns, makerOf } from '../token-maker.js'
import type { Revocation, TokenListOptions, TokenRecord, TokenRoll, TokenStore } from '../types.js'
import { guarded } from './errors.js'
import { REVOCATION_PAYLOAD, type RevocationWatch } from './revocation.js'
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
  previous_secret_hash: string | null
  previous_secret_expires_at: Date | null
  rate_limit_count: number | null
  rate_limit_window_ms: string | null
  created_by_token_id: string | null
  created_by_iss: string | null
  created_by_sub: string | null
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
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    rateLimit:
      row.rate_limit_count === null || row.rate_limit_window_ms === null
        ? null
        : { max: row.rate_limit_count, windowMs: Number(row.rate_limit_window_ms) },
    createdBy: makerOf(row),
  }
}

const INSERT = `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at,
    rate_limit_count, rate_limit_window_ms, created_by_token_id, created_by_iss, created_by_sub)
  VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7, $8, $9, $10, $11)`

function insertValues(token: TokenRecord): unknown[] {
  return [
    token.id,
    token.name,
    token.secretHash,
    token.scopes,
    token.createdAt,
    token.expiresAt,
    token.rateLimit?.max ?? null,
    token.rateLimit?.windowMs ?? null,
    ...makerColumns(token.createdBy),
  ]
}

/**
 * Moves the shared epoch and tells every listening instance, both only if the transaction commits.
 * Resolves to the new epoch.
 */
async function bumpEpoch(client: PoolClient, channel: string): Promise<number> {
  const bumped = await client.query<{ value: string }>(
    "UPDATE meta SET value = value + 1 WHERE key = 'token_epoch' RETURNING value::text AS value",
  )
  const value = bumped.rows[0]?.value ?? '0'
  await client.query(`SELECT pg_notify($1, ${REVOCATION_PAYLOAD})`, [channel, value])
  return Number(value)
}

export class PostgresTokenStore implements TokenStore {
  constructor(
    private readonly pool: Pool,
    private readonly watch: RevocationWatch,
  ) {}

  async insert(token: TokenRecord): Promise<void> {
    await guarded(() => this.pool.query(INSERT, insertValues(token)))
  }

  async find(id: string): Promise<TokenRecord | undefined> {
    const result = await guarded(() => this.pool.query<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id]))
    const row = result.rows[0]
    return row && toRecord(row)
  }

  async list(page?: TokenListOptions): Promise<TokenRecord[]> {
    const result = await guarded(() =>
      page === undefined
        ? this.pool.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id')
        : page.after === undefined
          ? this.pool.query<TokenRow>('SELECT * FROM tokens ORDER BY created_at, id LIMIT $1', [page.limit])
          : this.pool.query<TokenRow>(
              'SELECT * FROM tokens WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3',
              [page.after.createdAt, page.after.id, page.limit],
            ),
    )
    return result.rows.map(toRecord)
  }

  /** Bumps the shared epoch and notifies every listening instance, as a revocation does. */
  async roll(id: string, roll: TokenRoll, at: Date): Promise<TokenRecord | undefined> {
    const outcome = await inTransaction(this.pool, async (client) => {
      // One statement reads the current secret and replaces it: a concurrent roll waits for this
      // row, then moves this roll's secret to previous, so one previous secret is ever kept.
      const changed = await client.query<TokenRow>(
        `UPDATE tokens SET
           previous_secret_hash = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE secret_hash END,
           previous_secret_expires_at = $3,
           secret_hash = $2
         WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $4)
         RETURNING *`,
        [id, roll.secretHash, roll.previousSecretExpiresAt, at],
      )
      const row = changed.rows[0]
      if (row === undefined) return undefined
      return { record: toRecord(row), epoch: await bumpEpoch(client, this.watch.channel) }
    })
    if (outcome === undefined) return undefined
    this.watch.observe(outcome.epoch)
    return outcome.record
  }

  /** Bumps the shared epoch and notifies every listening instance, both only if the revocation commits. */
  async revoke(id: string, at: Date): Promise<Revocation> {
    const outcome = await inTransaction(this.pool, async (client) => {
      // A concurrent revocation of the same token holds its row: this update waits for it, then finds
      // the row revoked and changes nothing.
      // The token and every token it made, and theirs in turn (docs/tokens.md): what a revoked token
      // made would otherwise keep the access its maker lost.
      const changed = await client.query<{ id: string }>(
        `WITH RECURSIVE made(id) AS (
           SELECT id FROM tokens WHERE id = $2
           UNION SELECT tokens.id FROM tokens JOIN made ON tokens.created_by_token_id = made.id
         )
         UPDATE tokens SET revoked_at = $1 WHERE id IN (SELECT id FROM made) AND revoked_at IS NULL
         RETURNING id`,
        [at, id],
      )
      if (changed.rowCount === 0) {
        const found = await client.query('SELECT 1 FROM tokens WHERE id = $1', [id])
        return found.rowCount === 0 ? 'not-found' : 'already-revoked'
      }
      const epoch = await bumpEpoch(client, this.watch.channel)
      // A token revoked before may have made tokens since: they are revoked now, and the answer is
      // still that it was revoked before.
      return changed.rows.some((row) => row.id === id) ? epoch : { epoch }
    })
    if (typeof outcome === 'string') return outcome
    if (typeof outcome === 'object') {
      this.watch.observe(outcome.epoch)
      return 'already-revoked'
    }
    this.watch.observe(outcome)
    return 'revoked'
  }

  async insertFirst(token: TokenRecord, deliver: () => void): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      // Under READ COMMITTED two transactions would both see an empty table; this lock mode conflicts
      // with itself and with other writes to tokens, so the second waits and then sees the first's row.
      await client.query('LOCK TABLE tokens IN SHARE ROW EXCLUSIVE MODE')
      const existing = await client.query('SELECT 1 FROM tokens LIMIT 1')
      if (existing.rowCount !== 0) return false
      await client.query(INSERT, insertValues(token))
      deliver()
      return true
    })
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    await guarded(() => this.pool.query('UPDATE tokens SET last_used_at = $1 WHERE id = $2', [at, id]))
  }

  revocationEpoch(): number {
    return this.watch.epoch
  }
}
