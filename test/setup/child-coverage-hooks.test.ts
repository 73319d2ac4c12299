import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { endAtOnce } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

// Coverage counts the processes the tests start, which write it as they exit. With
// test/setup/child-coverage-hooks.mjs imported, a process a test ends at once (endAtOnce) first
// writes what it collected, which SIGKILL alone loses, and one under a file-size limit (a full disk,
// as tests stand one in) writes it whole.

const MODULE = new URL('./child-coverage-hooks.mjs', import.meta.url).pathname

/**
 * A node process running `body`, collecting coverage into a folder of its own, with the hooks
 * imported unless `hooks` is false, under a soft `ulimit -f` of `fileLimit` blocks if given (as
 * runCliWithFileLimit limits the CLI). `files` reads every coverage file written there, `written`
 * those that name the script.
 */
async function started(
  body: string,
  { hooks = true, fileLimit }: { hooks?: boolean; fileLimit?: number } = {},
) {
  const dir = tempDir()
  const script = join(dir, 'idle.mjs')
  // Pipes are written synchronously on Linux: "ready" is out before the body runs.
  writeFileSync(script, `process.stdout.write('ready\\n')\n${body}\n`)
  const coverage = join(dir, 'coverage')
  const node = [process.execPath, ...(hooks ? [`--import=${MODULE}`] : []), script]
  const [command, ...args] =
    fileLimit === undefined ? node : ['sh', '-c', `ulimit -S -f ${fileLimit} && exec "$@"`, 'sh', ...node]
  const child = spawn(command as string, args, {
    env: { ...process.env, NODE_V8_COVERAGE: coverage, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = once(child, 'exit')
  await once(child.stdout, 'data')
  // Node makes the folder when it first writes there.
  const files = () =>
    (existsSync(coverage) ? readdirSync(coverage) : []).map((name) =>
      readFileSync(join(coverage, name), 'utf8'),
    )
  const written = () => files().filter((text) => text.includes(pathToFileURL(script).href))
  return { child, exited, files, written }
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

describe('a process the tests start under a file-size limit', () => {
  // 16 blocks is far below a coverage file's size (a few kilobytes for this script alone, megabytes
  // for the service).
  it('writes its coverage whole as it exits', async () => {
    const { exited, files, written } = await started('', { fileLimit: 16 })
    await exited
    expect(files()).toHaveLength(1)
    expect(JSON.parse(written()[0] as string)).toMatchObject({ result: expect.any(Array) })
  })

  it('writes it cut at the limit without the hooks, which is why they lift it', async () => {
    const { exited, files } = await started('', { fileLimit: 16, hooks: false })
    await exited
    const [text] = files()
    expect(text?.length).toBe(16 * 512)
    expect(() => JSON.parse(text as string)).toThrow()
  })
})
