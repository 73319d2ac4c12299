import { vi } from 'vitest'
import { main } from '../../src/cli/main.js'
import type { CliResult } from './process.js'

/**
 * Runs a command in this process, through the same entry point bin/plantstore calls, and returns what
 * it wrote and the exit code it set: what the real CLI does, without a second of process start, and
 * where coverage sees it. `env` is set for the command only, as for a real one. A command that serves
 * or must end its process is run as a real one instead. Given `stdoutFails` (an errno code such as
 * EPIPE), every write to standard output fails with it, as to a reader that went away.
 */
export async function runHere(
  args: string[],
  env: Record<string, string> = {},
  { stdoutFails }: { stdoutFails?: string } = {},
): Promise<CliResult> {
  const before = Object.keys(env).map((name) => [name, process.env[name]] as const)
  Object.assign(process.env, env)
  let stdout = ''
  let stderr = ''
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk, ...rest: unknown[]) => {
    // A writer that waits for its text to be taken is told at once, as a stream would.
    const done = rest.find((arg) => typeof arg === 'function') as ((error?: Error) => void) | undefined
    if (stdoutFails !== undefined) {
      done?.(Object.assign(new Error(`write ${stdoutFails}`), { code: stdoutFails }))
      return false
    }
    stdout += String(chunk)
    done?.()
    return true
  })
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk)
    return true
  })
  process.exitCode = undefined
  try {
    await main(['node', 'plantstore', ...args])
  } finally {
    out.mockRestore()
    err.mockRestore()
    for (const [name, value] of before) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
  const code = Number(process.exitCode ?? 0)
  process.exitCode = undefined
  return { code, stdout, stderr }
}
