import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BIN, exitCode, ROOT } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

/**
 * Starts `serve` on a fresh file and sends SIGTERM `delayMs` after it logged its migrations, the last
 * line before the app is built and its stop put in place. Resolves with how it ended, or 'hung'.
 */
async function stopWhileStarting(delayMs: number): Promise<{ code: number | null | 'hung'; out: string }> {
  const child = spawn(BIN, ['serve', '--port', '0', '--database-url', `sqlite:${join(tempDir(), 'p.db')}`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let sent = false
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    if (!sent && out.includes('schema migrated')) {
      sent = true
      setTimeout(() => child.kill('SIGTERM'), delayMs)
    }
  })
  const exited = exitCode(child)
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 8000))
  const code = await Promise.race([exited, hung])
  if (code === 'hung') child.kill('SIGKILL')
  return { code, out }
}

describe('a SIGTERM as serve finishes starting', () => {
  // Node closes a signal's handle when its last listener goes: a signal caught but not yet delivered
  // when the start's listeners were swapped for serve's was dropped, and the server served on.
  // One start each: six starts in turn on a busy machine can outlast one test's time.
  it.each([0, 40, 60, 80, 100, 150])(
    'stops the process whenever it lands (%i ms after the migrations): exit 0, early or after draining',
    async (delayMs) => {
      const { code, out } = await stopWhileStarting(delayMs)
      expect(code, `SIGTERM ${delayMs} ms after the migrations; output: ${out}`).toBe(0)
      expect(/stopped while starting|"msg":"stopped"/.test(out), out).toBe(true)
    },
  )
})

describe('a stop signal while the CLI is still loading', () => {
  // Before serve's listeners exist, Node's default ended the process by the signal (exit 143), unlogged.
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    '%s: exit 0, saying it stopped before serving',
    async (signal) => {
      const hooks = join(ROOT, 'test/helpers/slow-cli-load.mjs')
      const child = spawn(
        BIN,
        ['serve', '--port', '0', '--database-url', `sqlite:${join(tempDir(), 'p.db')}`],
        {
          cwd: ROOT,
          env: { ...process.env, NODE_OPTIONS: `--import=${hooks}` },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let err = ''
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        if (!err.includes('cli loading held') && (err + chunk).includes('cli loading held'))
          child.kill(signal)
        err += chunk
      })
      let out = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
      })
      const code = await exitCode(child)
      expect(err).toContain('cli loading held')
      expect(code, `stderr: ${err}`).toBe(0)
      // Node 20 runs the launcher's listener while the load is held: it stops before serving. Node
      // 24 waits for the loader's hooks with its main thread blocked, so the signal is handled once
      // loading ends, by serve's own listeners, as soon as the start yields to the event loop: before
      // serving (stopped while starting), or, when the start runs through to listening first, as any
      // stop is, draining and logged. Either way exit 0, never the signal's unlogged default.
      const whileLoading = err.includes(
        `plantstore: stopped by ${signal} while loading, before serving anything`,
      )
      const whileStarting = out.includes('"msg":"stopped while starting, before serving anything"')
      const afterStarting =
        out.includes(`"signal":"${signal}","msg":"shutting down"`) && out.includes('"msg":"stopped"')
      if (Number(process.versions.node.split('.')[0]) <= 20) {
        expect(whileLoading || whileStarting, `stderr: ${err}\nstdout: ${out}`).toBe(true)
        expect(out).not.toContain('listening on')
      } else {
        expect(whileLoading || whileStarting || afterStarting, `stderr: ${err}\nstdout: ${out}`).toBe(true)
      }
    },
  )
})
