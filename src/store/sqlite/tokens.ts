import type { Database, Statement } from 'better-sqlite3'
import type { Revocation, TokenRecord, TokenStore } from '../types.js'
import { retryWhileBusy } from './busy.js'

interface TokenRow {
  id: string
  name: string
  secret_hash: string
  scopes: string
  created_at: number
  expires_at: number | null
  last_used_at: number | null
  revoked_at: number | null
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
  }
}

export class SqliteTokenStore implements TokenStore {
  private readonly selectOne: Statement
  private readonly dataVersion: Statement
  private readonly readEpoch: Statement
  private readonly touch: Statement
  private lastDataVersion = -1
  private epoch = 0

  constructor(private readonly db: Database) {
    this.selectOne = db.prepare('SELECT * FROM tokens WHERE id = ?')
    // data_version moves when another connection (the CLI, another worker) commits, never for this
    // one's own (the creates): only then is the epoch worth reading.
    this.dataVersion = db.prepare('PRAGMA data_version').pluck()
    this.readEpoch = db.prepare("SELECT value FROM meta WHERE key = 'token_epoch'").pluck()
    this.touch = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?')
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
        `INSERT INTO tokens (id, name, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
      )
      .run(
        token.id,
        token.name,
        token.secretHash,
        token.scopes.join(' '),
        token.createdAt.getTime(),
        token.expiresAt?.getTime() ?? null,
      )
  }

  async find(id: string): Promise<TokenRecord | undefined> {
    const row = this.selectOne.get(id) as TokenRow | undefined
    return row && toRecord(row)
  }

  async list(): Promise<TokenRecord[]> {
    const rows = this.db.prepare('SELECT * FROM tokens ORDER BY created_at, id').all() as TokenRow[]
    return rows.map(toRecord)
  }

  async revoke(id: string, at: Date): Promise<Revocation> {
    const run = this.db.transaction((): Revocation => {
      const changed = this.db
        .prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(at.getTime(), id).changes
      if (changed === 0) return this.selectOne.get(id) === undefined ? 'not-found' : 'already-revoked'
      this.db.prepare("UPDATE meta SET value = value + 1 WHERE key = 'token_epoch'").run()
      return 'revoked'
    })
    const revoked = run.immediate()
    // data_version does not move for this connection's own commits: force a fresh read of the epoch.
    this.lastDataVersion = -1
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
    const version = this.dataVersion.get() as number
    if (version !== this.lastDataVersion) {
      this.lastDataVersion = version
      this.epoch = this.readEpoch.get() as number
    }
    return this.epoch
  }
}
