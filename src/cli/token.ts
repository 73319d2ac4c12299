import { fstatSync, statSync } from 'node:fs'
import { ConfigError } from '../config.js'
import { inDays, MAX_DURATION_MS, parseDuration } from '../duration.js'
import { openTokens } from '../store/open.js'
import type { TokenRecord } from '../store/types.js'
import { holdsToken } from '../tokens/format.js'
import { DEFAULT_SCOPES, isScope, SCOPES, type Scope } from '../tokens/scopes.js'
import { TokenService } from '../tokens/service.js'
import {
  type CliDatabaseOptions,
  databaseLocation,
  withExistingStore,
  withStore,
  withStoreToRead,
} from './database.js'

export interface CreateOptions extends CliDatabaseOptions {
  name: string
  scopes?: string
  expiresIn?: string
}

export function parseScopes(raw: string | undefined): Scope[] {
  if (raw === undefined) return [...DEFAULT_SCOPES]
  const scopes = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const unknown = scopes.filter((s) => !isScope(s))
  if (scopes.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `invalid --scopes ${JSON.stringify(raw)}: expected a comma list of ${SCOPES.join(', ')}`,
    )
  }
  return [...new Set(scopes)] as Scope[]
}

export async function tokenCreate(options: CreateOptions): Promise<void> {
  const name = options.name.trim()
  // A tab or a newline would break the columns of `token list`, and an escape could drive the terminal.
  if (/\p{Cc}/u.test(name)) {
    throw new ConfigError('invalid --name: control characters such as tab or newline are not allowed')
  }
  // A bidirectional override or isolate would reorder the rest of its `token list` line on screen, so
  // a name could pass itself off as another token's.
  if (/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(name)) {
    throw new ConfigError(
      'invalid --name: bidirectional formatting characters such as U+202E are not allowed',
    )
  }
  // A token pasted where its name belongs (`--name "$TOKEN"`) would be stored whole and shown by every
  // `token list`, where only the hash of a secret is ever kept.
  if (holdsToken(name)) {
    throw new ConfigError('invalid --name: it holds a token; name what the token is for instead')
  }
  // Counted in code points, as plant names are: an emoji is one character, not two UTF-16 units.
  const length = [...name].length
  if (length === 0 || length > 100) throw new ConfigError('invalid --name: expected 1 to 100 characters')
  const scopes = parseScopes(options.scopes)
  let expiresInMs: number | undefined
  if (options.expiresIn !== undefined) {
    const ms = parseDuration(options.expiresIn)
    // At least a second: a token that expires before anyone can use it is a mistake, not a lifetime.
    if (ms === null || ms < 1000) {
      throw new ConfigError(
        `invalid --expires-in ${JSON.stringify(options.expiresIn)}: expected e.g. 30s, 15m, 12h, 30d, at least 1s, at most ${inDays(MAX_DURATION_MS)} (100 years)`,
      )
    }
    expiresInMs = ms
  }
  // That store is gone when this command exits: the token it printed would exist nowhere.
  const location = databaseLocation(options)
  if (location.kind === 'sqlite' && location.path === ':memory:') {
    throw new ConfigError(
      'token create cannot issue into sqlite::memory:, which is gone when the command exits; give the database the server uses (a throwaway server issues its own with serve --bootstrap-token-file)',
    )
  }
  if (outputDiscarded()) {
    throw new Error(
      'cannot write the token to standard output (it is closed or /dev/null, where nobody would receive it); no token was issued',
    )
  }
  await withStore(options, openTokens, async (store) => {
    const tokens = new TokenService(store.tokens)
    const { token, record } = await tokens.create(name, scopes, expiresInMs)
    try {
      await printed(`${token}\n`)
    } catch (error) {
      // Nobody received the secret (a reader that went away, a full disk): left active, the token
      // would be one nobody can use and nobody knows to revoke.
      await tokens.revoke(record.id)
      const cause = (error as NodeJS.ErrnoException).code ?? (error as Error).message
      throw new Error(
        `cannot write the token to standard output (${cause}); token ${record.id} was revoked, issue another`,
      )
    }
  })
}

/**
 * Whether standard output goes to /dev/null. Node reopens a closed one (`>&-`) there, so the write
 * of the token succeeds and the command would leave an active token that nobody received.
 */
function outputDiscarded(): boolean {
  try {
    const out = fstatSync(1)
    return out.isCharacterDevice() && out.rdev === statSync('/dev/null').rdev
  } catch {
    // No /dev/null (Windows) or no descriptor to look at: the write itself says whether it failed.
    return false
  }
}

/** Resolves once stdout has taken the text, or rejects with why it could not. */
function printed(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()))
  })
}

function status(token: TokenRecord, now: number): string {
  if (token.revokedAt) return 'revoked'
  if (token.expiresAt && token.expiresAt.getTime() <= now) return 'expired'
  return 'active'
}

function toJson(token: TokenRecord, now: number) {
  return {
    id: token.id,
    name: token.name,
    prefix: `pst_${token.id}_`,
    scopes: token.scopes,
    createdAt: token.createdAt.toISOString(),
    expiresAt: token.expiresAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
    status: status(token, now),
  }
}

export async function tokenList(options: CliDatabaseOptions & { json?: boolean }): Promise<void> {
  await withStoreToRead(options, openTokens, async (store) => {
    const now = Date.now()
    const tokens = (await store.tokens.list()).map((t) => toJson(t, now))
    if (options.json) {
      process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`)
      return
    }
    const header = ['ID', 'NAME', 'PREFIX', 'SCOPES', 'CREATED', 'EXPIRES', 'LAST USED', 'STATUS']
    const rows = tokens.map((t) => [
      t.id,
      t.name,
      t.prefix,
      t.scopes.join(','),
      t.createdAt,
      t.expiresAt ?? '-',
      t.lastUsedAt ?? '-',
      t.status,
    ])
    // Loaded for the table alone: it sets up Unicode segmentation as it loads, a wait that token
    // create, revoke and list --json have no use for.
    const { default: stringWidth } = await import('string-width')
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => stringWidth(r[i] as string))))
    for (const row of [header, ...rows]) {
      process.stdout.write(
        `${row
          .map((cell, i) => cell + ' '.repeat((widths[i] as number) - stringWidth(cell)))
          .join('  ')
          .trimEnd()}\n`,
      )
    }
  })
}

/**
 * The public id `revoke` was given: the id itself in either case, the `pst_<id>_` prefix `token list`
 * shows, or the whole token, as an operator who found it leaked would paste it. Anything else is
 * looked up as it is, and is then not found.
 */
const PUBLIC_ID = /^[0-9a-f]{16}$/

export function publicIdOf(given: string): string {
  const trimmed = given.trim()
  const id = /^(?:pst_)?([0-9a-f]{16})(?:_(?:[A-Za-z0-9_-]{43})?)?$/i.exec(trimmed)?.[1]
  return id === undefined ? trimmed : id.toLowerCase()
}

/**
 * Returns false when no token has that id (the command then exits 1). A token revoked before is left
 * as it was, and the command succeeds: what was asked for holds, so a script may revoke again.
 */
export async function tokenRevoke(given: string, options: CliDatabaseOptions): Promise<boolean> {
  const id = publicIdOf(given)
  return withExistingStore(options, openTokens, async (store) => {
    const revocation = await new TokenService(store.tokens).revoke(id)
    // Given the whole token instead of its id, the answer names the id and never repeats the secret.
    if (revocation === 'revoked') process.stderr.write(`token ${id} revoked\n`)
    else if (revocation === 'already-revoked') process.stderr.write(`token ${id} was already revoked\n`)
    // Something that is no id at all (a token missing its first characters, say) is not quoted: it
    // may be most of a secret, which redaction would not recognise without its prefix.
    else if (PUBLIC_ID.test(id)) process.stderr.write(`no token with id ${id}\n`)
    else process.stderr.write('no token with that id: an id is the 16 hex digits `token list` shows\n')
    return revocation !== 'not-found'
  })
}
