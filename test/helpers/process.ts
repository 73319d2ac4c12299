import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { openStore, parseDatabaseUrl } from '../../src/store/open.js'
import { DEFAULT_SCOPES, type Scope } from '../../src/tokens/scopes.js'
import { TokenService } from '../../src/tokens/service.js'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const BIN = `${ROOT}bin/plantstore`

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs the real CLI as a user would. */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      BIN,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
    if (input !== undefined) child.stdin?.end(input)
  })
}

/**
 * Runs the real CLI under a limit on the size of any file it writes (`ulimit -f`, in the shell's
 * blocks): a disk that fills up midway, without the privileges a mounted file system would need. The
 * limit is a soft one, which the process could raise and the CLI does not: the coverage the process
 * writes as it exits is written whole (test/setup/child-coverage-hooks.mjs).
 */
export function runCliWithFileLimit(blocks: number, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'sh',
      ['-c', `ulimit -S -f ${blocks} && exec "$@"`, 'sh', BIN, ...args],
      { cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
      },
    )
  })
}

/**
 * A token made on the database at `url` in this process, as `plantstore token create` makes one (that
 * command has tests of its own), for tests that only need one: a process start less for each.
 */
export async function issueToken(url: string, name: string, scopes?: string): Promise<string> {
  const location = parseDatabaseUrl(url)
  if (!location) throw new Error(`bad test database url ${url}`)
  const store = await openStore(location)
  try {
    const wanted = scopes === undefined ? DEFAULT_SCOPES : (scopes.split(',') as Scope[])
    return (await new TokenService(store.tokens).create(name, wanted)).token
  } finally {
    await store.close()
  }
}

/**
 * Resolves with the exit code once the process has exited and what it wrote has been read. Node may
 * emit 'exit' before the last of stdout and stderr has arrived; 'close' would wait for every holder of
 * the pipes, which a server's workers can be, so the wait for the output is bounded instead.
 */
export async function exitCode(child: ChildProcess, drainMs = 2000): Promise<number | null> {
  const [code] = (await once(child, 'exit')) as [number | null]
  const drained = [child.stdout, child.stderr].map((stream) => {
    if (!stream || stream.readableEnded || stream.destroyed) return undefined
    const end = once(stream, 'end').catch(() => undefined)
    stream.resume() // a stream nobody reads would never end
    return end
  })
  await settledWithin(Promise.all(drained), drainMs)
  return code
}

/** Waits for `promise` to settle, or `ms` to pass, whichever comes first. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    promise,
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms)
    }),
  ])
  clearTimeout(timer)
}

export interface RunningServer {
  url: string
  port: number
  process: ChildProcess
  /** Everything the process has written to stdout so far. */
  output(): string
  /** Resolves with the exit code once the process has exited (null when a signal ended it). */
  exited: Promise<number | null>
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** Ends the process at once, as a test's clean-up does (endAtOnce). */
  end(): Promise<void>
}

/**
 * Ends a process a test is done with at once, as SIGKILL does. While coverage is measured the process
 * first writes what it has collected (SIGUSR2, test/setup/child-coverage-hooks.mjs), which SIGKILL alone
 * would lose, and is killed outright if it has not ended within 2 s. A test whose point is a process
 * killed at an arbitrary instant sends SIGKILL itself.
 */
export async function endAtOnce(
  child: ChildProcess,
  exited: Promise<unknown>,
  writesCoverage = process.env.NODE_OPTIONS?.includes('child-coverage-hooks.mjs') ?? false,
): Promise<void> {
  const running = () => child.exitCode === null && child.signalCode === null
  if (!running()) return
  if (writesCoverage) {
    child.kill('SIGUSR2')
    await settledWithin(exited, 2000)
  }
  if (running()) child.kill('SIGKILL')
  await exited
}

/** Starts `./bin/plantstore serve --port 0 …` and resolves once it logs its address. */
export async function startServer(
  args: string[],
  env: Record<string, string> = {},
  /** setpriv's options, to run the server as another user (setpriv execs it: the pid is the server's). */
  setpriv?: string[],
): Promise<RunningServer> {
  const command = ['serve', '--port', '0', ...args]
  const child = spawn(setpriv ? 'setpriv' : BIN, setpriv ? [...setpriv, BIN, ...command] : command, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const exited = exitCode(child)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that never said where it listens is no test's to stop: this one ends it.
      child.kill('SIGKILL')
      reject(new Error(`server did not start: ${out}${err}`))
    }, 20_000)
    const check = () => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1] as string)
      }
    }
    child.stdout.on('data', check)
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}: ${out}${err}`))
    })
  })
  return {
    url,
    port: Number(new URL(url).port),
    process: child,
    exited,
    output: () => out + err,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
    end: () => endAtOnce(child, exited),
  }
}

/**
 * A named pipe made at `path`, and everything a reader of it (`cat`) reads until the writer closes
 * it. The reader gives up after 10 s, should nothing ever open the pipe for writing.
 */
export function readFifo(path: string): Promise<string> {
  execFileSync('mkfifo', [path])
  const reader = spawn('timeout', ['10', 'cat', path])
  let read = ''
  reader.stdout.on('data', (chunk) => {
    read += String(chunk)
  })
  return once(reader, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`the reader of ${path} exited ${code}`)
    return read
  })
}
