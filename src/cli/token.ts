import { fstatSync, statSync } from 'node:fs'
import { ConfigError } from '../config.js'
import { AppError, errors } from '../errors.js'
import { openTokens } from '../store/open.js'
import { type NewTokenBody, newTokenInput } from '../tokens/requests.js'
import { DEFAULT_SCOPES } from '../tokens/scopes.js'
import { type CreatedToken, TokenService } from '../tokens/service.js'
import { NewToken, TokenRollRequest } from '../tokens/shape-validators.js'
import { overlapMs, type TokenField, TokenInputError } from '../tokens/validate.js'
import { previousSecretUntil, tokenView } from '../tokens/view.js'
import { checkOf, refusalsFor, type ShapeCheck } from '../validation-errors.js'
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
  rateLimit?: string
}

const FLAGS: Record<TokenField, string> = {
  name: 'name',
  scopes: 'scopes',
  expiresIn: 'expires-in',
  rateLimit: 'rate-limit',
  overlap: 'overlap',
}

type FlagValues = Partial<Record<TokenField, string>>

// The options are read as POST /tokens reads its body: with the same schemas, through validators
// generated from them at build time, so that a token command loads neither TypeBox nor Ajv's compiler.
const newTokenCheck = checkOf(NewToken, refusalsFor('body', 'NewToken'))
const rollCheck = checkOf(TokenRollRequest, refusalsFor('body', 'TokenRollRequest'))

/**
 * Checks a body made of the flags with its schema and reads it as POST /tokens does, turning a
 * refusal into the flag's: `invalid --expires-in "soon": expected …`. A name is never quoted back,
 * as it may hold a token.
 */
function fromFlags<T>(check: ShapeCheck, body: Record<string, unknown>, read: () => T, flags: FlagValues): T {
  try {
    const refusal = check(body)
    if (refusal !== undefined) throw refusal
    return read()
  } catch (error) {
    if (!(error instanceof TokenInputError)) throw error
    const raw = error.field === 'name' ? undefined : flags[error.field]
    const given = raw === undefined ? '' : ` ${JSON.stringify(raw)}`
    throw new ConfigError(`invalid --${FLAGS[error.field]}${given}: ${error.reason}`)
  }
}

/** `--scopes`: a comma list; the default scopes when not given. */
function scopeList(raw: string | undefined): string[] {
  if (raw === undefined) return [...DEFAULT_SCOPES]
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

export async function tokenCreate(options: CreateOptions): Promise<void> {
  const body: Record<string, unknown> = { name: options.name, scopes: scopeList(options.scopes) }
  if (options.expiresIn !== undefined) body.expiresIn = options.expiresIn
  if (options.rateLimit !== undefined) body.rateLimit = options.rateLimit
  const input = fromFlags(newTokenCheck, body, () => newTokenInput(body as unknown as NewTokenBody), options)
  // That store is gone when this command exits: the token it printed would exist nowhere.
  const location = databaseLocation(options)
  if (location.kind === 'sqlite' && location.path === ':memory:') {
    throw new ConfigError(
      'token create cannot issue into sqlite::memory:, which is gone when the command exits; give the database the server uses (a throwaway server issues its own with serve --bootstrap-token-file)',
    )
  }
  refuseDiscardedOutput('no token was issued')
  await withStore(options, openTokens, async (store) => {
    const tokens = new TokenService(store.tokens)
    const { token, record } = await tokens.create(
      input.name,
      input.scopes,
      input.expiresInMs,
      input.rateLimit,
    )
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

function refuseDiscardedOutput(outcome: string): void {
  if (outputDiscarded()) {
    throw new Error(
      `cannot write the token to standard output (it is closed or /dev/null, where nobody would receive it); ${outcome}`,
    )
  }
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

export async function tokenList(options: CliDatabaseOptions & { json?: boolean }): Promise<void> {
  await withStoreToRead(options, openTokens, async (store) => {
    const now = Date.now()
    const tokens = (await store.tokens.list()).map((t) => tokenView(t, now))
    if (options.json) {
      process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`)
      return
    }
    const header = [
      'ID',
      'NAME',
      'PREFIX',
      'SCOPES',
      'CREATED',
      'EXPIRES',
      'LAST USED',
      'RATE LIMIT',
      'OLD SECRET UNTIL',
      'STATUS',
    ]
    const rows = tokens.map((t) => [
      t.id,
      t.name,
      t.prefix,
      t.scopes.join(','),
      t.createdAt,
      t.expiresAt ?? '-',
      t.lastUsedAt ?? '-',
      t.rateLimit ?? '-',
      t.previousSecretExpiresAt ?? '-',
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

export interface RollOptions extends CliDatabaseOptions {
  overlap?: string
}

/**
 * Gives a token a new secret and prints it as `token create` prints a token. The replaced secret
 * keeps working for the overlap (default 24h; 0s: not at all). Returns false when no token has that
 * id (exit 1); a revoked or expired token is refused too, having no secret to roll.
 */
export async function tokenRoll(given: string, options: RollOptions): Promise<boolean> {
  const id = publicIdOf(given)
  const body: Record<string, unknown> = options.overlap === undefined ? {} : { overlap: options.overlap }
  const overlap = fromFlags(rollCheck, body, () => overlapMs(options.overlap), options)
  refuseDiscardedOutput('the token was not rolled')
  return withExistingStore(options, openTokens, async (store) => {
    const tokens = new TokenService(store.tokens)
    let rolled: CreatedToken
    try {
      rolled = await tokens.roll(id, overlap)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      if (error.entry === errors.TOKEN_NOT_ACTIVE)
        process.stderr.write(`token ${id} is revoked or expired: it cannot be rolled; issue a new one\n`)
      else if (PUBLIC_ID.test(id)) process.stderr.write(`no token with id ${id}\n`)
      else process.stderr.write('no token with that id: an id is the 16 hex digits `token list` shows\n')
      return false
    }
    try {
      await printed(`${rolled.token}\n`)
    } catch (error) {
      const cause = (error as NodeJS.ErrnoException).code ?? (error as Error).message
      const until = previousSecretUntil(rolled.record, Date.now())
      // Nobody received the new secret. With no overlap nobody holds a working one either: the token
      // is revoked, as token create revokes one it could not hand out.
      if (until === null) {
        await tokens.revoke(rolled.record.id)
        throw new Error(
          `cannot write the token to standard output (${cause}); token ${rolled.record.id} was rolled and then revoked, issue another`,
        )
      }
      throw new Error(
        `cannot write the token to standard output (${cause}); token ${rolled.record.id} was rolled, its previous secret works until ${until.toISOString()}: roll it again`,
      )
    }
    return true
  })
}
