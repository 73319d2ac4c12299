// The servers the benchmark starts and watches: the service through its launcher, and any other
// process that says where it listens; their memory and CPU read from /proc.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { BIN, ROOT } from './paths.js'

// Stopped if the run is interrupted, so that no server outlives the benchmark.
export const running = new Set<ChildProcess>()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of running) child.kill('SIGTERM')
    process.exit(130)
  })
}

export interface Server {
  url: string
  process: ChildProcess
  stop(): Promise<number | null>
}

export async function startProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<Server> {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${output}`)), 30_000)
    const check = () => {
      const match = /listening on (http:\/\/[^"\s]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1] as string)
      }
    }
    child.stdout?.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited with ${code}:\n${output}`))
    })
  })
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** The process and its children (cluster workers), whose memory and CPU count as the server's. */
export function processTree(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
    return [pid, ...(children ? children.split(/\s+/).map(Number).flatMap(processTree) : [])]
  } catch {
    return [pid]
  }
}

export function rssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

/** utime + stime of a /proc stat line, in seconds (clock ticks of 1/100 s, as Linux reports them). */
export function statCpuSeconds(stat: string): number {
  // The command name in parentheses may hold spaces; the fields after it are space separated.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds (user + system) a process and all its threads have used so far. */
export function cpuSeconds(pid: number): number {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return 0
  }
}

/**
 * The environment and node flags of the launcher's first line, `#!/usr/bin/env [-S] [VAR=…] node
 * [--flag…]`: what the service runs with when the benchmark starts node itself.
 */
export function launcherSettings(firstLine: string): { env: Record<string, string>; nodeFlags: string[] } {
  const words = firstLine
    .replace(/^#!\S+\s*(-S\s+)?/, '')
    .split(/\s+/)
    .filter(Boolean)
  const at = words.indexOf('node')
  const before = at < 0 ? [] : words.slice(0, at)
  const env = Object.fromEntries(
    before
      .filter((w) => w.includes('='))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  )
  return { env, nodeFlags: at < 0 ? [] : words.slice(at + 1) }
}
const LAUNCHER = launcherSettings(readFileSync(BIN, 'utf8').split('\n')[0] ?? '')

/** A token for the load, issued with the CLI as an operator would: the default scopes, or those given. */
export function issueToken(databaseUrl: string, scopes?: string[]): string {
  const scoped = scopes === undefined ? [] : ['--scopes', scopes.join(',')]
  return execFileSync(BIN, ['token', 'create', '--name', 'bench', ...scoped, '--database-url', databaseUrl], {
    encoding: 'utf8',
    // A refusal (a scope this build does not know) is the caller's to report.
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

/**
 * `plantstore serve` on its own port, the one token never limited. Started through the launcher, as
 * `npm start` does, so its settings apply; with node flags (Node refuses --perf-basic-prof in
 * NODE_OPTIONS) it starts node itself with the launcher's settings and them.
 */
export function startService(
  databaseUrl: string,
  workers: string,
  nodeFlags: string[] = [],
): Promise<Server> {
  // One token sends everything here: the per-token limit would refuse most requests with 429.
  const serve = [
    'serve',
    '--port',
    '0',
    '--database-url',
    databaseUrl,
    '--workers',
    workers,
    '--rate-limit',
    'off',
  ]
  return nodeFlags.length === 0
    ? startProcess(BIN, serve)
    : startProcess(process.execPath, [...LAUNCHER.nodeFlags, ...nodeFlags, BIN, ...serve], LAUNCHER.env)
}
