import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lacking } from '../helpers/requirement.js'
import { freePort, hasContainerTools, type Podman, podmanIn, root, waitReady } from './podman.js'

// The Dockerfile, compose.yaml and deploy/plantstore.service as users run them, with podman on
// stand-ins for the official images (test/deploy/stand-ins/build.sh says which and why). One file, in
// order: the systemd and compose tests run the image the first test built.
const skip = lacking(hasContainerTools(), 'podman, podman-compose or debootstrap is not installed')
const IMAGE = 'localhost/plantstore:test'
const MAX_ID = '9223372036854775807'
const version = JSON.parse(readFileSync(`${root}package.json`, 'utf8')).version as string
// The Node line of the Dockerfile's default BASE (node:MAJOR-bookworm-slim): build.sh makes its stand-in.
const nodeMajor = readFileSync(`${root}Dockerfile`, 'utf8').match(/^ARG BASE=node:(\d+)-bookworm-slim$/m)?.[1]

let podman: Podman

/** A request from inside a container, to its own service: instances behind the balancer publish nothing. */
async function fetchInside(
  container: string,
  path: string,
  token: string,
): Promise<{ status: number; body: string }> {
  const script =
    'fetch("http://127.0.0.1:8080" + process.env.P, { headers: { authorization: "Bearer " + process.env.T } })' +
    '.then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })))'
  const out = await podman.must('podman', [
    'exec',
    '-e',
    `P=${path}`,
    '-e',
    `T=${token}`,
    container,
    'node',
    '-e',
    script,
  ])
  return JSON.parse(out)
}

function create(base: string, token: string, id: string, name: string): Promise<Response> {
  return fetch(`${base}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `{"id":${id},"name":"${name}"}`,
    signal: AbortSignal.timeout(10_000),
  })
}

describe.skipIf(skip)('the container image, compose.yaml and the systemd unit', () => {
  beforeAll(async () => {
    podman = podmanIn()
    await podman.must('bash', ['test/deploy/stand-ins/build.sh', `${podman.dir}/work`], {
      timeoutMs: 600_000,
    })
  }, 660_000)

  afterAll(async () => {
    await podman?.destroy()
  }, 180_000)

  it("builds from the Dockerfile on its default BASE's stand-in, keeping its HEALTHCHECK, to run as a non-root user", async () => {
    expect(nodeMajor).toBeDefined()
    await podman.must(
      'podman',
      [
        'build',
        '--format',
        'docker',
        '--build-arg',
        `BASE=localhost/node-stand-in:${nodeMajor}`,
        '-t',
        IMAGE,
        '.',
      ],
      { timeoutMs: 900_000 },
    )
    const config = JSON.parse(await podman.must('podman', ['image', 'inspect', IMAGE]))[0] as {
      Config: { User: string; Env: string[]; ExposedPorts: object; Volumes: object }
      Healthcheck?: { Test: string[] }
    }
    expect(config.Config.User).toBe('plantstore:plantstore')
    expect(config.Healthcheck?.Test).toEqual(['CMD', 'plantstore', 'health'])
    expect(config.Config.Env).toEqual(
      expect.arrayContaining(['DATABASE_URL=sqlite:/data/plantstore.db', 'PORT=8080']),
    )
    expect(Object.keys(config.Config.ExposedPorts)).toEqual(['8080/tcp'])
    expect(Object.keys(config.Config.Volumes)).toEqual(['/data'])
    // The image is the packed package installed with `npm install --global` on a clean system.
    const installed = await podman.must('podman', [
      'run',
      '--rm',
      '--entrypoint',
      'npm',
      IMAGE,
      'ls',
      '--global',
      '--prefix',
      '/opt/plantstore',
      '--depth',
      '0',
    ])
    expect(installed).toContain(`plantstore@${version}`)
    expect(await podman.must('podman', ['run', '--rm', IMAGE, '--version'])).toBe(`${version}\n`)
    // The service runs on the Node of that line, which the SQLite driver was compiled against.
    expect(await podman.must('podman', ['run', '--rm', '--entrypoint', 'node', IMAGE, '--version'])).toMatch(
      new RegExp(`^v${nodeMajor}\\.`),
    )
    // Nothing used only to build it: no compiler, no development dependency.
    const leftovers = await podman.run('podman', [
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      'command -v g++ make',
    ])
    expect(leftovers.stdout).toBe('')
    const typescript = await podman.run('podman', [
      'run',
      '--rm',
      '--entrypoint',
      'test',
      IMAGE,
      '-e',
      '/opt/plantstore/lib/node_modules/plantstore/node_modules/typescript',
    ])
    expect(typescript.code).toBe(1)
  }, 960_000)

  describe('docker run', () => {
    const name = 'plantstore-test'
    let base = ''
    let token = ''
    const acknowledged: string[] = []

    const logs = async () => (await podman.run('podman', ['logs', name])).stdout

    it('serves /readyz, writes the first token to --bootstrap-token-file, and token create works inside', async () => {
      const port = await freePort()
      base = `http://127.0.0.1:${port}`
      await podman.must('podman', [
        'run',
        '--detach',
        '--name',
        name,
        '--publish',
        `127.0.0.1:${port}:8080`,
        '--volume',
        'plantstore-test-data:/data',
        '--env',
        'BOOTSTRAP_TOKEN_FILE=/data/first-token',
        IMAGE,
      ])
      await waitReady(`${base}/readyz`, 60_000, logs)
      const first = (await podman.must('podman', ['exec', name, 'cat', '/data/first-token'])).trim()
      expect((await fetch(`${base}/plants`, { headers: { authorization: `Bearer ${first}` } })).status).toBe(
        200,
      )
      token = (
        await podman.must('podman', ['exec', name, 'plantstore', 'token', 'create', '--name', 'test'])
      ).trim()
      expect(token).toMatch(/^pst_/)
      const created = await create(base, token, MAX_ID, 'Largest')
      expect(created.status).toBe(200)
      expect(await created.text()).toBe(`{"id":${MAX_ID},"name":"Largest"}`)
      acknowledged.push(MAX_ID)
      // The HEALTHCHECK as the engine runs it (podman schedules it through systemd, absent here).
      expect((await podman.run('podman', ['healthcheck', 'run', name])).code).toBe(0)
    }, 120_000)

    it('stops on SIGTERM as PID 1: drains, exits 0 in time, and loses no acknowledged create', async () => {
      let stopping = false
      let next = 1
      const writer = async () => {
        while (!stopping) {
          const id = String(next++)
          try {
            const response = await create(base, token, id, `Plant ${id}`)
            if (response.status === 200) acknowledged.push(id)
          } catch {
            // Refused or cut off by the stop: not acknowledged, so not owed.
          }
        }
      }
      const writers = Array.from({ length: 4 }, writer)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const started = Date.now()
      await podman.must('podman', ['stop', '--time', '30', name])
      const took = Date.now() - started
      stopping = true
      await Promise.all(writers)
      const state = JSON.parse(await podman.must('podman', ['inspect', name]))[0] as {
        State: { ExitCode: number }
      }
      expect(state.State.ExitCode, await logs()).toBe(0)
      // Well inside --shutdown-timeout (10 s): no wait for a kill.
      expect(took).toBeLessThan(10_000)
      expect(await logs()).toMatch(/"signal":"SIGTERM".*shutting down[\s\S]*"msg":"stopped"/)
      expect(acknowledged.length).toBeGreaterThan(1)
    }, 120_000)

    it('starts again on the same volume with every acknowledged plant', async () => {
      await podman.must('podman', ['start', name])
      await waitReady(`${base}/readyz`, 60_000, logs)
      const read = await fetch(`${base}/plants/${MAX_ID}`, { headers: { authorization: `Bearer ${token}` } })
      expect(await read.text()).toBe(`{"id":${MAX_ID},"name":"Largest"}`)
      const stored = new Set<string>()
      let after = ''
      for (;;) {
        const page = await fetch(`${base}/plants?limit=1000${after}`, {
          headers: { authorization: `Bearer ${token}` },
        })
        const plants = (await page.text()).match(/"id":\d+/g)?.map((field) => field.slice(5)) ?? []
        for (const id of plants) stored.add(id)
        const link = page.headers.get('link')?.match(/after=(\d+)/)
        if (!link) break
        after = `&after=${link[1]}`
      }
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([])
      await podman.must('podman', ['rm', '--force', '--time', '30', name])
      await podman.must('podman', ['volume', 'rm', 'plantstore-test-data'])
    }, 120_000)
  })

  describe('systemd', () => {
    const name = 'plantstore-test-systemd'
    const unit = `${root}deploy/plantstore.service`
    const inside = (...args: string[]) => podman.run('podman', ['exec', name, ...args])
    const journal = async () => (await inside('journalctl', '--unit', 'plantstore', '--no-pager')).stdout
    let base = ''
    let token = ''

    it('the unit passes systemd-analyze verify, and security rates its exposure OK or better', async () => {
      await podman.must(
        'podman',
        ['build', '--build-arg', `IMAGE=${IMAGE}`, '-t', `${IMAGE}-systemd`, 'test/deploy/systemd-host'],
        { timeoutMs: 300_000 },
      )
      const port = await freePort()
      base = `http://127.0.0.1:${port}`
      const env = join(podman.dir, 'plantstore.env')
      writeFileSync(env, 'HOST=0.0.0.0\n')
      await podman.must('podman', [
        'run',
        '--detach',
        '--name',
        name,
        '--systemd',
        'always',
        '--publish',
        `127.0.0.1:${port}:8080`,
        '--volume',
        `${unit}:/etc/systemd/system/plantstore.service:ro`,
        '--volume',
        `${env}:/etc/plantstore/plantstore.env:ro`,
        `${IMAGE}-systemd`,
      ])
      const verify = await inside('systemd-analyze', 'verify', '/etc/systemd/system/plantstore.service')
      expect(verify).toMatchObject({ code: 0, stderr: '' })
      const security = await podman.must('systemd-analyze', ['security', '--offline=true', unit])
      const level = security.match(/Overall exposure level for plantstore\.service: ([\d.]+) (\w+)/)
      expect(['PERFECT', 'SAFE', 'OK'], security).toContain(level?.[2])
    }, 360_000)

    it('systemctl start returns once the service is ready; its user writes the first token', async () => {
      // Booting takes a moment: systemctl answers once the manager runs.
      await expect
        .poll(async () => (await inside('systemctl', 'is-system-running', '--wait')).stdout.trim(), {
          timeout: 60_000,
          interval: 500,
        })
        .toMatch(/^(running|degraded)$/)
      const start = await inside('systemctl', 'start', 'plantstore')
      expect(start.code, await journal()).toBe(0)
      // Started means ready: ExecStartPost waited for /readyz.
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      const created = await inside(
        'systemd-run',
        '--pipe',
        '--wait',
        '--quiet',
        '--property=DynamicUser=yes',
        '--property=User=plantstore',
        '--property=PrivateUsers=yes',
        '--property=StateDirectory=plantstore',
        'plantstore',
        'token',
        'create',
        '--name',
        'admin',
        '--database-url',
        'sqlite:/var/lib/plantstore/plantstore.db',
      )
      expect(created.code, created.stderr).toBe(0)
      token = created.stdout.trim()
      expect((await create(base, token, MAX_ID, 'Unit')).status).toBe(200)
    }, 120_000)

    it('systemctl stop drains it to a clean exit, and a new start has the plant', async () => {
      expect((await inside('systemctl', 'stop', 'plantstore')).code).toBe(0)
      const shown = (await inside('systemctl', 'show', 'plantstore', '--property=Result,ExecMainStatus'))
        .stdout
      expect(shown).toContain('Result=success')
      expect(shown).toContain('ExecMainStatus=0')
      expect(await journal()).toContain('"msg":"stopped"')
      expect((await inside('systemctl', 'start', 'plantstore')).code).toBe(0)
      const read = await fetch(`${base}/plants/${MAX_ID}`, { headers: { authorization: `Bearer ${token}` } })
      expect(await read.text()).toBe(`{"id":${MAX_ID},"name":"Unit"}`)
      await podman.must('podman', ['rm', '--force', '--time', '10', name])
    }, 120_000)
  })

  it('compose.yaml: two instances on PostgreSQL behind the balancer, a create through it seen by both', async () => {
    const port = await freePort()
    const project = 'plantstore-test'
    const env = {
      PLANTSTORE_IMAGE: IMAGE,
      POSTGRES_IMAGE: 'localhost/postgres-stand-in:15',
      PROXY_IMAGE: 'localhost/haproxy-stand-in:2.6',
      PLANTSTORE_PORT: `127.0.0.1:${port}`,
    }
    const compose = (args: string[], timeoutMs = 180_000) =>
      podman.must('podman-compose', ['--project-name', project, '--file', 'compose.yaml', ...args], {
        env,
        timeoutMs,
      })
    const container = (service: string) => `${project}_${service}_1`
    const why = async () =>
      (
        await Promise.all(
          ['postgres', 'plantstore-1', 'plantstore-2', 'proxy'].map(
            async (service) =>
              `${service}:\n${(await podman.run('podman', ['logs', container(service)])).stdout.slice(-2000)}`,
          ),
        )
      ).join('\n')
    try {
      await compose(['up', '--detach'])
      const base = `http://127.0.0.1:${port}`
      await waitReady(`${base}/readyz`, 120_000, why)
      // Both instances answer behind the balancer before the create, so that each is asked after it.
      for (const service of ['plantstore-1', 'plantstore-2']) {
        await waitReady(`${base}/readyz`, 60_000, why)
        const ready = await podman.must('podman', [
          'exec',
          container(service),
          'node',
          '-e',
          'fetch("http://127.0.0.1:8080/readyz").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))',
        ])
        expect(ready).toBe('')
      }
      const token = (
        await podman.must('podman', [
          'exec',
          container('plantstore-1'),
          'plantstore',
          'token',
          'create',
          '--name',
          'compose',
        ])
      ).trim()
      const created = await create(base, token, MAX_ID, 'Balanced')
      expect(created.status, await why()).toBe(200)
      for (const service of ['plantstore-1', 'plantstore-2']) {
        const read = await fetchInside(container(service), `/plants/${MAX_ID}`, token)
        expect(read).toEqual({ status: 200, body: `{"id":${MAX_ID},"name":"Balanced"}` })
      }
    } finally {
      await compose(['down', '--volumes'])
    }
  }, 420_000)
})
