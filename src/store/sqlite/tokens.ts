import type { Database, Statement } from 'better-sqlite3'
import { makerColumns, makerOf } from '../token-maker.js'
import type { Revocation, TokenListOptions, TokenRecord, TokenRoll, TokenStore } from '../types.js'
import { retryWhileBusy } from './busy.js'
import { SqliteRevocationEpoch } from './revocation.js'

interface TokenRow {
  id: string
  name: string
  secret_hash: string
  scopes: string
  created_at: number
  expires_at: number | null
  last_used_at: number | null
  revoked_at: number | null
  previous_secret_hash: string | null
  previous_secret_expires_at: number | null
  rate_limit_count: number | null
  rate_limit_window_ms: number | null
  created_by_token_id: string | null
  created_by_iss: string | null
  created_by_sub: string | null
}

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms))

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    secretHash: row.secret_hash,
    scopes: row.scopes.split(' ').filter(Boolean),
    createdAt: new Date(row.created_at),
    expiresAt: date(row.expires_at),
    lastUsedAt: date(row.last_used_at),
    revokedAt: date(row.revoked_at),
    previousSecretHash: row.previous_secret_hash,
    previousSecretExpiresAt: date(row.previous_secret_expires_at),
    rateLimit:
      row.rate_limit_count === null || row.rate_limit_window_ms === null
        ? null
        : { max: row.rate_limit_count, windowMs: row.rate_limit_window_ms },
    createdBy: makerOf(row),
  }
}

export class SqliteTokenStore implements TokenStore {
  private readonly selectOne: Statement
  private readonly touch: Statement
  private readonly bumpEpoch: Statement
  /** The revocation epoch, watched from the connection that commits the creates once it is open. */
  readonly revocations: SqliteRevocationEpoch

  constructor(private readonly db: Database) {
    this.selectOne = db.prepare('SELECT * FROM tokens WHERE id = ?')
    this.revocations = new SqliteRevocationEpoch(db)
    this.touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?')
    this.bumpEpoch = db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'")
  }

  async insert(token: TokenRecord): Promise<void> {
    this.insertRow(token)
  }

  async insertFirst(token: TokenRecord, deliver: () => void): Promise<boolean> {
    // IMMEDIATE takes the write lock before the check, so another process's check waits for this one.
    const run = this.db.transaction(() => {
      if (this.db.prepare('SELECT 1 FROM tokens LIMIT 1').get() !== undefined) return false
      this.insertRow(token)
      deliver()
      return true
    })
    return run.immediate()
  }

  private insertRow(token: TokenRecord): void {
    this.db
      .prepare(
        `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at,
           rate_limit_count, rate_limit_window_ms, created_by_token_id, created_by_iss, created_by_sub)
         VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?)`,
      )
      .run(
        token.id,
        token.name,
        token.secretHash,
        token.scopes.join(' '),
        token.createdAt.getTime(),
        token.expiresAt?.getTime() ?? null,
        token.rateLimit?.max ?? null,
        token.rateLimit?.windowMs ?? null,
        ...makerColumns(token.createdBy),
      )
  }

  async find(id: string): Promise<TokenRecord | undefined> {
    const row = this.selectOne.get(id) as TokenRow | undefined
    return row && toRecord(row)
  }

  async list(page?: TokenListOptions): Promise<TokenRecord[]> {
    if (page === undefined) {
      return (this.db.prepare('SELECT * FROM tokens ORDER BY created_at, id').all() as TokenRow[]).map(
        toRecord,
      )
    }
    const rows = (
      page.after === undefined
        ? this.db.prepare('SELECT * FROM tokens ORDER BY created_at, id LIMIT ?').all(page.limit)
        : this.db
            .prepare('SELECT * FROM tokens WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?')
            .all(page.after.createdAt.getTime(), page.after.id, page.limit)
    ) as TokenRow[]
    return rows.map(toRecord)
  }

  async roll(id: string, roll: TokenRoll, at: Date): Promise<TokenRecord | undefined> {
    const run = this.db.transaction((): TokenRecord | undefined => {
      // The previous secret is taken from the row as it stands, in the statement that replaces it: two
      // rolls at once leave one previous secret, never a mix of the two.
      const changed = this.db
        .prepare(
          `UPDATE tokens SET
             previous_secret_hash = CASE WHEN @previousExpiresAt IS NULL THEN NULL ELSE secret_hash END,
             previous_secret_expires_at = @previousExpiresAt,
             secret_hash = @secretHash
           WHERE id = @id AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > @at)`,
        )
        .run({
          id,
          secretHash: roll.secretHash,
          previousExpiresAt: roll.previousSecretExpiresAt?.getTime() ?? null,
          at: at.getTime(),
        }).changes
      if (changed === 0) return undefined
      this.bumpEpoch.run()
      return toRecord(this.selectOne.get(id) as TokenRow)
    })
    const rolled = run.immediate()
    // As after a revocation: this connection's own commit does not move data_version.
    this.revocations.forget()
    return rolled
  }

  async revoke(id: string, at: Date): Promise<Revocation> {
    const run = this.db.transaction((): Revocation => {
      // The token and every token it made, and theirs in turn (docs/tokens.md): what a revoked token
      // made would otherwise keep the access its maker lost.
      const changed = this.db
        .prepare(
          `WITH RECURSIVE made(id) AS (
             SELECT id FROM tokens WHERE id = @id
             UNION SELECT tokens.id FROM tokens JOIN made ON tokens.created_by_token_id = made.id
           )
           UPDATE tokens SET revoked_at = @at WHERE id IN (SELECT id FROM made) AND revoked_at IS NULL`,
        )
        .run({ at: at.getTime(), id }).changes
      if (changed === 0) return this.selectOne.get(id) === undefined ? 'not-found' : 'already-revoked'
      // A token revoked before may have made tokens since: they are revoked now, and the answer is
      // still that it was revoked before.
      if ((this.selectOne.get(id) as TokenRow).revoked_at !== at.getTime()) {
        this.bumpEpoch.run()
        return 'already-revoked'
      }
      this.bumpEpoch.run()
      return 'revoked'
    })
    const revoked = run.immediate()
    // data_version does not move for this connection's own commits: force a fresh read of the epoch.
    this.revocations.forget()
    return revoked
  }

  /**
   * A write nobody waits for: another process's write lock is waited out between turns of the event
   * loop, not in SQLite's busy handler, which would hold the whole process (every request, /readyz,
   * a metrics scrape) for up to the busy timeout. Each attempt alone runs without one.
   */
  async touchLastUsed(id: string, at: Date): Promise<void> {
    const timeoutMs = this.db.pragma('busy_timeout', { simple: true }) as number
    await retryWhileBusy(() => {
      this.db.pragma('busy_timeout = 0')
      try {
        this.touch.run(at.getTime(), id)
      } finally {
        this.db.pragma(`busy_timeout = ${timeoutMs}`)
      }
    }, timeoutMs)
  }

  revocationEpoch(): number {
    return this.revocations.read()
  }
}
