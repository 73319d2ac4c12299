import type { Store } from '../types.js'

export interface PostgresOptions {
  url: string
}

export async function openPostgres(_options: PostgresOptions): Promise<Store> {
  throw new Error('PostgreSQL storage is not available in this version; use a sqlite: DATABASE_URL')
}
