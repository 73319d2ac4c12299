import cluster from 'node:cluster'
import { readFileSync } from 'node:fs'
import { Command, CommanderError, Option } from 'commander'
import { ConfigError, envName, resolveServeConfig, SERVE_SETTINGS } from '../config.js'
import { redactTokens } from '../redact.js'
import { SCOPES } from '../tokens/scopes.js'
import { readTracingSettings, TRACING_HELP } from '../tracing/settings.js'
import type { CliDatabaseOptions } from './database.js'
import type { ImportOptions } from './import.js'
import { reportOnStderr } from './report.js'
import type { CreateOptions, RollOptions } from './token.js'

// Exit codes, the same for every command: 0 success, 1 the operation failed, 2 usage or configuration.
export const EXIT_OK = 0
export const EXIT_FAILED = 1
export const EXIT_USAGE = 2

/**
 * A file argument that names no file is a usage error: passed on, an empty name would fail later
 * with a puzzling message (SQLite takes it for a temporary database), as an operation failure.
 */
function fileName(what: string, value: string): string {
  if (value.trim() === '') throw new ConfigError(`${what} needs a file name`)
  return value
}

const databaseOption = () =>
  new Option('--database-url <url>', 'sqlite:PATH, sqlite::memory: or postgres://… [env: DATABASE_URL]')

/** The release, as package.json names it (two folders up from src/cli and from dist/cli alike). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
  return String((manifest as { version: unknown }).version)
}

// The stdout listener of the command being run. main() runs more than once in a process that embeds
// the CLI; each run replaces its predecessor's listener rather than piling one more onto stdout.
let stdoutListener: ((error: NodeJS.ErrnoException) => void) | undefined

function listenToStdout(listener: (error: NodeJS.ErrnoException) => void): void {
  if (stdoutListener) process.stdout.off('error', stdoutListener)
  stdoutListener = listener
  process.stdout.on('error', listener)
}

/**
 * The program: every command, its options and its help, from modules that load nothing else. Each
 * action loads its command's implementation as it runs, so that `--help`, a usage error or one
 * command does not wait for the store, the logger or the HTTP code that other commands use.
 */
function buildProgram(): Command {
  const program = new Command('plantstore')
    .description('Plant Store: a plant store HTTP API')
    // Operators and bug reports ask a deployed binary which release it is.
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride()
    .showHelpAfterError(false)
    // Commander quotes the argument it refuses (`unknown command 'pst_…'`): a token pasted in the
    // wrong place must not reach a terminal's scrollback or a CI log whole.
    .configureOutput({ writeErr: (text) => process.stderr.write(redactTokens(text)) })

  // A reader that stops early (`token list | head -1`) breaks the pipe under a write already handed to
  // stdout: the EPIPE then arrives as an 'error' event, which unheard crashed the command with a
  // stack. What was wanted has been read.
  program.hook('preAction', (_program, command) => {
    if (command.name() === 'serve') {
      // serve's stdout is its log: a reader that goes away (a log shipper that died) must not take
      // the service down, nor end a graceful stop as a crash when its "shutting down" line cannot
      // be written. It says so once on stderr and serves on without a log.
      let told = false
      listenToStdout((error) => {
        if (told) return
        told = true
        reportOnStderr(`the log (standard output) cannot be written, serving without it: ${error.message}`)
      })
      return
    }
    // token create and roll handle a failed write of their one line themselves: a secret nobody got
    // must not be left working.
    if ((command.name() === 'create' || command.name() === 'roll') && command.parent?.name() === 'token') {
      listenToStdout(() => {})
      return
    }
    // Any other failure to write (a full disk under `export > file`) is the command's failure, but
    // thrown from this listener it escaped as an uncaught exception with a stack: say it in one line.
    // The command cannot go on without its output, and what it committed is already durable.
    listenToStdout((error) => {
      if (error.code === 'EPIPE') return
      reportOnStderr(`cannot write to standard output: ${error.message}`)
      process.exit(EXIT_FAILED)
    })
  })

  const serveCommand = program.command('serve').description('run the HTTP service')
  for (const s of SERVE_SETTINGS) {
    const help = `${s.description} [env: ${envName(s.flag)}${s.default === undefined ? '' : `, default: ${s.default}`}]`
    const value = s.boolean ? `[${s.placeholder}]` : `<${s.placeholder}>`
    serveCommand.addOption(new Option(`--${s.flag} ${value}`, help))
  }
  serveCommand.addHelpText('after', TRACING_HELP)
  serveCommand.action(async (flags: Record<string, string | boolean | undefined>) => {
    const config = { ...resolveServeConfig(flags), tracing: readTracingSettings() }
    // Loaded only here: the framework, the routes and the dispatcher are what serve needs alone, and
    // every other command would otherwise wait for them to load before doing its own work.
    const { serve } = await import('./serve.js')
    await serve(config)
  })

  const healthCommand = program
    .command('health')
    .description(
      "ask the service on this host whether it is ready (its /readyz): exit 0 if so, 1 if not; for a container's HEALTHCHECK or a systemd unit",
    )
  // Read as serve reads them, so that the one environment serves and checks the same address.
  const listen = (key: string) => SERVE_SETTINGS.find((s) => s.key === key)?.default
  healthCommand
    .option(
      '--host <host>',
      `the address serve listens on; 0.0.0.0 or :: means this host [env: HOST, default: ${listen('host')}]`,
    )
    .option('--port <port>', `the port serve listens on [env: PORT, default: ${listen('port')}]`)
  healthCommand
    .option('--wait <duration>', 'keep asking until it is ready or this long has passed, such as 60s', '0s')
    .action(async (flags: Record<string, string | undefined>) => {
      const { checkHealth } = await import('./health.js')
      if (!(await checkHealth(flags))) process.exitCode = EXIT_FAILED
    })

  program
    .command('migrate')
    .description('create or update the database schema, then exit')
    .addOption(databaseOption())
    .action(async (options: CliDatabaseOptions) => {
      const { migrateDatabase } = await import('./migrate.js')
      await migrateDatabase(options)
    })

  const token = program.command('token').description('issue, list, roll and revoke bearer tokens')
  token
    .command('create')
    .description('create a token and print it (the only time it is shown) as the one line on stdout')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--scopes <list>', `comma list of ${SCOPES.join(', ')}`, 'plants:read,plants:write')
    .option('--expires-in <duration>', 'lifetime such as 30s, 15m, 12h, 30d; no expiry when absent')
    .option(
      '--rate-limit <count/window>',
      "this token's own limit, e.g. 100/1m, in place of serve's --rate-limit; absent: serve's applies",
    )
    .addOption(databaseOption())
    .action(async (options: CreateOptions) => {
      const { tokenCreate } = await import('./token.js')
      await tokenCreate(options)
    })
  token
    .command('list')
    .description('list tokens (never their secrets)')
    .option('--json', 'print one JSON array, for scripts')
    .addOption(databaseOption())
    .action(async (options: CliDatabaseOptions & { json?: boolean }) => {
      const { tokenList } = await import('./token.js')
      await tokenList(options)
    })
  token
    .command('revoke')
    .description('revoke a token by its id (as shown by token list); refused from the next request on')
    .argument('<id>', 'the public id of the token (its pst_<id>_ prefix or the whole token also do)')
    .addOption(databaseOption())
    .action(async (id: string, options: CliDatabaseOptions) => {
      const { tokenRevoke } = await import('./token.js')
      if (!(await tokenRevoke(id, options))) process.exitCode = EXIT_FAILED
    })
  token
    .command('roll')
    .description(
      'give a token a new secret and print it as create does; the old secret keeps working for the overlap, then stops',
    )
    .argument('<id>', 'the public id of the token (its pst_<id>_ prefix or the whole token also do)')
    .option(
      '--overlap <duration>',
      'how long the old secret keeps working, 0s to 30d; 0s: it stops at once',
      '24h',
    )
    .addOption(databaseOption())
    .action(async (id: string, options: RollOptions) => {
      const { tokenRoll } = await import('./token.js')
      if (!(await tokenRoll(id, options))) process.exitCode = EXIT_FAILED
    })

  program
    .command('import')
    .description(
      'import plants from JSON Lines or CSV (id,name,tag); re-running skips identical plants; exits 1 if any line is rejected',
    )
    .argument('<file>', 'a .jsonl/.ndjson or .csv file, or - for standard input (with --format)')
    .option('--format <format>', 'jsonl or csv (default: from the file extension)')
    .option('--emit-events', 'write a plant.created event (webhook) for each plant created')
    .option('--batch-size <count>', 'plants per transaction, 1 to 100000', '2000')
    .option(
      '--body-limit <size>',
      "largest JSON line or CSV record accepted, as serve's body: a larger one is rejected [env: BODY_LIMIT, default: 64kb]",
    )
    .addOption(databaseOption())
    .action(async (file: string, options: ImportOptions) => {
      const name = fileName('import', file)
      const [{ importPlants }, { traceCommand }] = await Promise.all([
        import('./import.js'),
        import('../tracing/command.js'),
      ])
      if (!(await traceCommand('import', () => importPlants(name, options)))) process.exitCode = EXIT_FAILED
    })

  program
    .command('export')
    .description('write every plant as JSON Lines {id,name,tag?}, in id order')
    .option(
      '--output <file>',
      'write to this regular file (complete or not at all) instead of stdout; - is stdout',
    )
    .addOption(databaseOption())
    .action(async (options: CliDatabaseOptions & { output?: string }) => {
      if (options.output !== undefined) fileName('--output', options.output)
      const [{ exportPlants }, { traceCommand }] = await Promise.all([
        import('./export.js'),
        import('../tracing/command.js'),
      ])
      await traceCommand('export', () => exportPlants(options))
    })

  program
    .command('backup')
    .description('write a consistent copy of the SQLite database to FILE while it keeps serving')
    .argument('<file>', 'where to write the copy; must not exist')
    .addOption(databaseOption())
    .action(async (file: string, options: CliDatabaseOptions) => {
      const name = fileName('backup', file)
      const { backupDatabase } = await import('./backup.js')
      await backupDatabase(name, options)
    })
  return program
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv)
  } catch (error) {
    reportFailure(error)
    // A cluster worker's channel to the primary would keep a failed worker alive.
    if (cluster.isWorker) process.exit()
  }
}

function reportFailure(error: unknown): void {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help/version text).
    process.exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_USAGE
    return
  }
  // A reader that stops early (`export | head`) is not a failure of the export.
  if ((error as { code?: unknown }).code === 'EPIPE') return
  if (error instanceof ConfigError) {
    reportOnStderr(error.message)
    process.exitCode = EXIT_USAGE
    return
  }
  reportOnStderr(error instanceof Error ? error.message : String(error))
  process.exitCode = EXIT_FAILED
}
