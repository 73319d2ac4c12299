import type Database from 'better-sqlite3'
import type { TokenDatabase } from '../types.js'
import { closeDatabase, openDatabase, type SqliteOptions } from './open-database.js'
import { type OpenedFile, openedFile } from './opened-file.js'
import { SqliteTokenStore } from './tokens.js'

/**
 * A SQLite database's tokens alone, for the token commands: opened, migrated and closed as the whole
 * store (index.ts) is, without loading the plants', events' and webhooks' code, which they never run.
 */
export class SqliteTokenDatabase implements TokenDatabase {
  readonly tokens: SqliteTokenStore
  private readonly file: OpenedFile | undefined

  constructor(
    private readonly db: Database.Database,
    path: string,
  ) {
    this.file = openedFile(path)
    this.tokens = new SqliteTokenStore(db)
  }

  async close(): Promise<void> {
    closeDatabase(this.db, this.file)
  }
}

export function openSqliteTokens(options: SqliteOptions): SqliteTokenDatabase {
  return new SqliteTokenDatabase(openDatabase(options).db, options.path)
}
