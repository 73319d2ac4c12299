import { execFile, execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('../..', import.meta.url))

/** What the container tests run: podman, podman-compose and debootstrap, from Debian's packages. */
export function hasContainerTools(): boolean {
  return ['podman', 'podman-compose', 'debootstrap'].every((tool) => {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

export interface Podman {
  dir: string
  env: NodeJS.ProcessEnv
  /** Runs a command (podman, podman-compose, the stand-ins' script) with this storage's settings. */
  run(
    command: string,
    args: string[],
    options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<Run>
  /** As run, but a non-zero exit throws with the command's output. */
  must(
    command: string,
    args: string[],
    options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<string>
  /** Removes every container, network, volume and image of this storage, then the storage itself. */
  destroy(): Promise<void>
}

/**
 * podman with its state in a folder of the tests' own, set as this machine needs: runc (crun refuses
 * its mixed cgroup set-up), cgroupfs and file events (no systemd), limits it may not raise. Set
 * PLANTSTORE_TEST_PODMAN_DIR to keep the storage, and so the stand-in images, between local runs.
 */
export function podmanIn(): Podman {
  const kept = process.env.PLANTSTORE_TEST_PODMAN_DIR
  const dir = kept ?? mkdtempSync(join(tmpdir(), 'plantstore-podman-'))
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'storage.conf'),
    `[storage]\ndriver = "overlay"\ngraphroot = "${dir}/storage"\nrunroot = "${dir}/run"\n`,
  )
  writeFileSync(
    join(dir, 'containers.conf'),
    [
      '[containers]',
      'default_ulimits = ["nofile=8192:8192", "nproc=4096:4096"]',
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  )
  const env = {
    ...process.env,
    CONTAINERS_CONF: join(dir, 'containers.conf'),
    CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf'),
  }
  const run: Podman['run'] = (command, args, options = {}) =>
    new Promise((resolve) => {
      execFile(
        command,
        args,
        {
          cwd: root,
          env: { ...env, ...options.env },
          timeout: options.timeoutMs ?? 120_000,
          killSignal: 'SIGKILL',
          maxBuffer: 64 * 1024 * 1024,
          encoding: 'utf8',
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
          resolve({ code, stdout, stderr: error && code === 1 && !stderr ? error.message : stderr })
        },
      )
    })
  const must: Podman['must'] = async (command, args, options) => {
    const result = await run(command, args, options)
    if (result.code !== 0) {
      throw new Error(
        `${command} ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`,
      )
    }
    return result.stdout
  }
  return {
    dir,
    env,
    run,
    must,
    async destroy() {
      await run('podman', ['rm', '--all', '--force', '--time', '0'])
      await run('podman', ['volume', 'prune', '--force'])
      if (kept) return
      // Also drops the networks podman-compose made, whose settings podman keeps outside the storage.
      await run('podman', ['system', 'reset', '--force'], { timeoutMs: 120_000 })
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** A port free on 127.0.0.1 now, for a container to publish. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/** Polls url until it answers 200, or throws with what it last saw once timeoutMs has passed. */
export async function waitReady(url: string, timeoutMs: number, why: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      if (response.status === 200) return
      last = `status ${response.status}`
    } catch (error) {
      last = (error as Error).message
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`${url} was not ready within ${timeoutMs} ms (${last}):\n${await why()}`)
}
