import { rmSync } from 'node:fs'
import type { Logger } from 'pino'
import type { ServeConfig } from '../config.js'
import { openStoreRetrying } from '../store/open.js'
import type { Store } from '../store/types.js'
import { SCOPES } from '../tokens/scopes.js'
import { TokenService } from '../tokens/service.js'
import { whyNotWritable, writePrivateFile } from './private-file.js'

/** Opens the store with serve's settings, retrying an unreachable database for --database-startup-timeout. */
export async function openStoreForServing(config: ServeConfig, logger: Logger): Promise<Store> {
  const store = await openStoreRetrying(
    config.database,
    { poolSize: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs },
    {
      timeoutMs: config.databaseStartupTimeoutMs,
      onRetry: (err, attempt) => logger.warn({ err: err.message, attempt }, 'database unreachable; retrying'),
    },
  )
  if (store.migrated.length > 0) logger.info({ migrations: store.migrated }, 'schema migrated')
  return store
}

/**
 * All or nothing: a token whose file could not be written would be a full-scope secret nobody has,
 * and would stop every later start from bootstrapping. So the file is written inside the transaction
 * that stores the token, which a failed write undoes, and removed again if the commit fails. The
 * store holds other instances' bootstraps off meanwhile, so instances started at once on an empty
 * store make one token, not one each.
 */
export async function bootstrapToken(config: ServeConfig, store: Store, logger: Logger): Promise<void> {
  const file = config.bootstrapTokenFile
  if (!file) return
  let written = false
  try {
    const created = await new TokenService(store.tokens).createFirst('bootstrap', SCOPES, (token) => {
      try {
        writePrivateFile(file, `${token}\n`)
      } catch (error) {
        throw new Error(`cannot write --bootstrap-token-file ${file}: ${whyNotWritable(error)}`, {
          cause: error,
        })
      }
      written = true
    })
    if (created) logger.info({ tokenId: created.record.id, file }, 'bootstrap token created')
  } catch (error) {
    if (written) rmSync(file, { force: true })
    throw error
  }
}
