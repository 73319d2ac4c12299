import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('install', () => {
  it("better-sqlite3's install script builds from source and never tries to download a binary", () => {
    // npm passes its settings to install scripts as npm_config_*; leave them out so that only the
    // repository's .prebuild-installrc can be what says so.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)))
    const run = spawnSync(process.execPath, [`${root}node_modules/prebuild-install/bin.js`, '--verbose'], {
      cwd: `${root}node_modules/better-sqlite3`,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(run.stderr).toContain('--build-from-source specified, not attempting download')
    expect(run.stderr).not.toContain('http request')
    // A non-zero exit is what makes the install script fall through to `node-gyp rebuild`.
    expect(run.status).toBe(1)
  })

  it('npm pack holds what an installed plantstore runs: the launcher, the build, its migrations and assets', () => {
    // --ignore-scripts: the build is the suite's own, already made; prepare would make it again.
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(pack.status, pack.stderr).toBe(0)
    const files =
      (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? []
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/plantstore',
        'dist/cli/main.js',
        'dist/store/sqlite/migrations/001_init.sql',
        'dist/store/postgres/migrations/001_init.sql',
        'dist/store/sqlite/checkpoint-thread.js',
        'dist/client/index.js',
        'dist/client/schema.d.ts',
      ]),
    )
    // Nothing of the repository's own: tests, benchmarks, CI, deployment files, the lock file.
    expect(files.filter((path) => !/^(dist|src)\//.test(path)).sort()).toEqual([
      'README.md',
      'bin/plantstore',
      'package.json',
    ])
  })
})
