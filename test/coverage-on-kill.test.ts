import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { endAtOnce } from './helpers/process.js'
import { tempDir } from './helpers/stores.js'

// Coverage counts the processes the tests start, and a test done with a server ends it at once
// (endAtOnce): with test/setup/coverage-on-kill.mjs imported, such a process first writes what it
// collected, which SIGKILL alone loses.

const MODULE = new URL('./setup/coverage-on-kill.mjs', import.meta.url).pathname

/** A node process running `body`, collecting coverage into a folder of its own, and that folder. */
async function started(body: string) {
  const dir = tempDir()
  const script = join(dir, 'idle.mjs')
  // Pipes are written synchronously on Linux: "ready" is out before the body runs.
  writeFileSync(script, `process.stdout.write('ready\\n')\n${body}\n`)
  const coverage = join(dir, 'coverage')
  const child = spawn(process.execPath, [`--import=${MODULE}`, script], {
    env: { ...process.env, NODE_V8_COVERAGE: coverage, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = once(child, 'exit')
  await once(child.stdout, 'data')
  // Node makes the folder when it first writes there.
  const written = () =>
    (existsSync(coverage) ? readdirSync(coverage) : []).filter((name) =>
      readFileSync(join(coverage, name), 'utf8').includes(pathToFileURL(script).href),
    )
  return { child, exited, written }
}

describe('ending a process the tests started, at once', () => {
  it('has it write its coverage first, then end as SIGKILL ends it', async () => {
    const { child, exited, written } = await started('setInterval(() => {}, 1000)')
    await endAtOnce(child, exited, true)
    expect(child.signalCode).toBe('SIGKILL')
    expect(written()).toHaveLength(1)
  })

  it('loses that coverage with SIGKILL alone, which is why it asks first', async () => {
    const { child, exited, written } = await started('setInterval(() => {}, 1000)')
    await endAtOnce(child, exited, false)
    expect(child.signalCode).toBe('SIGKILL')
    expect(written()).toEqual([])
  })

  it('kills a process that cannot write it, its event loop stuck, after 2 s', async () => {
    const { child, exited, written } = await started('for (;;) {}')
    const began = Date.now()
    await endAtOnce(child, exited, true)
    expect(child.signalCode).toBe('SIGKILL')
    expect(Date.now() - began).toBeGreaterThanOrEqual(1900)
    expect(written()).toEqual([])
  })
})
