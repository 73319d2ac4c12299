import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { SERVE_SETTINGS } from '../../src/config.js'
import { runHere } from '../helpers/cli.js'
import { ROOT } from '../helpers/process.js'
import { tempDir } from '../helpers/stores.js'

// What the CLI answers to a command line it refuses, run in this process through the entry point
// bin/plantstore calls (test/process/cli.test.ts sends a few of the same through the real binary).
describe('plantstore usage errors', () => {
  const dbUrl = () => `sqlite:${join(tempDir(), 'p.db')}`
  afterEach(() => {
    process.exitCode = undefined
  })

  it.each([
    [['token', 'create', '--name', 'x', '--scopes', 'plants:fly'], /--scopes/],
    [['token', 'create', '--name', 'x', '--expires-in', 'soon'], /--expires-in/],
    [['token', 'create'], /--name/],
    [['serve', '--port', '70000'], /--port \(PORT\)/],
    [['serve', '--body-limit', 'huge'], /--body-limit/],
    // A timer waits at most 2^31 − 1 ms (about 24.8 days): past it, it fires at once.
    [['serve', '--retention-interval', '25d'], /--retention-interval .*at most 24d/],
    [['serve', '--shutdown-timeout', '999999999d'], /--shutdown-timeout .*at most 24d/],
    [['serve', '--rate-limit', '100/25d'], /--rate-limit/],
    [['serve', '--webhook-poll-interval', '25d'], /--webhook-poll-interval/],
    // A cutoff or a lifetime must stay a date.
    [['serve', '--tokens-retention', '99999999d'], /--tokens-retention .*at most 36500d/],
    [['serve', '--idempotency-ttl', '36501d'], /--idempotency-ttl/],
    [['serve', '--webhook-retry-schedule', '5s,99999999d'], /--webhook-retry-schedule/],
    [['serve', '--log-level', 'loud'], /--log-level/],
    [['serve', '--bootstrap-token-file', ''], /--bootstrap-token-file \(BOOTSTRAP_TOKEN_FILE\) ""/],
    [['serve', '--database-url', 'mysql://x'], /--database-url/],
    // The driver cannot read it (port past 65535); the password is not repeated.
    [
      ['serve', '--database-url', 'postgres://u:hunter2@127.0.0.1:99999/db'],
      /--database-url .*"postgres:\/\/u:\*\*\*@127.*": expected sqlite:PATH, sqlite::memory: or postgres:\/\/…$/,
    ],
    [
      ['token', 'list', '--database-url', 'postgres://u:hun#ter2@127.0.0.1/db'],
      /--database-url .*u:\*\*\*@.*": expected sqlite:PATH, sqlite::memory: or postgres:\/\/…$/,
    ],
    // Refused as no URL it knows, it is still quoted without its password, wherever that is given.
    [['serve', '--database-url', 'POSTGRES://u:hunter2@127.0.0.1:99999/db'], /--database-url .*u:\*\*\*@127/],
    [['serve', '--database-url', 'mysql://u:hunter2@127.0.0.1/db'], /--database-url .*u:\*\*\*@127/],
    [
      ['serve', '--database-url', 'postgres://u@127.0.0.1:99999/db?sslmode=require&password=hunter2'],
      /--database-url .*sslmode=require&password=\*\*\*"/,
    ],
    // The driver took an sslmode it does not know as a request for TLS, and failed naming neither.
    [
      ['migrate', '--database-url', 'postgres://u:hunter2@127.0.0.1/db?sslmode=disabled'],
      /--database-url .*u:\*\*\*@.*: expected an sslmode of disable, .*no-verify, not "disabled"$/,
    ],
    [
      ['token', 'list', '--database-url', 'postgres://u@127.0.0.1/db?sslmode=allow&password=hunter2'],
      /"allow"$/,
    ],
    // Read as libpq reads it, the driver knows no no-verify either.
    [
      ['migrate', '--database-url', 'postgres://u@127.0.0.1/db?uselibpqcompat=true&sslmode=no-verify'],
      /"no-verify"$/,
    ],
    // The driver reads the file as it parses the URL; it was refused as no URL this service knows.
    [
      ['migrate', '--database-url', 'postgres://u:hunter2@127.0.0.1/db?sslrootcert=/nonexistent/ca.pem'],
      /expected ssl files this user can read \(ENOENT: .*'\/nonexistent\/ca\.pem'\)"?$/,
    ],
    [['serve', '--no-such-flag'], /unknown option/],
    [['frobnicate'], /unknown command/],
    [['backup', ''], /backup needs a file name/],
    [['backup', '  '], /backup needs a file name/],
    [['export', '--output', ''], /--output needs a file name/],
    [['import', '', '--format', 'jsonl'], /import needs a file name/],
  ])('exits 2 with one line on stderr for %j', async (args, message) => {
    const needsDb = args[0] !== 'frobnicate' && !args.includes('--database-url')
    const res = await runHere([...args, ...(needsDb ? ['--database-url', dbUrl()] : [])])
    expect(res.code).toBe(2)
    const lines = res.stderr.split('\n').filter((l) => l.trim() !== '')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(message)
    expect(res.stderr).not.toMatch(/\bat .+:\d+:\d+/)
    expect(res.stderr).not.toContain('hunter2')
  })

  it.each([
    'migrate',
    'export',
    'backup copy.db',
    'import plants.jsonl',
    'token list',
    'token revoke 0123456789abcdef',
  ])(
    'refuses sqlite::memory: for %s with exit 2: it would find an empty store and keep nothing',
    async (line) => {
      const dir = tempDir()
      writeFileSync(join(dir, 'plants.jsonl'), '{"id":1,"name":"a"}\n')
      const args = line.split(' ').map((arg) => (arg.includes('.') ? join(dir, arg) : arg))
      const res = await runHere([...args, '--database-url', 'sqlite::memory:'])
      expect(res.code).toBe(2)
      expect(res.stderr).toBe(
        'plantstore: sqlite::memory: is a throwaway store that exists only inside the process that opens it: this command would find it empty and leave nothing in it; give the database the server uses\n',
      )
      expect(res.stdout).toBe('')
      expect(readdirSync(dir)).toEqual(['plants.jsonl'])
    },
  )

  it.each([['--version'], ['-V']])(
    '%s prints the version as the one line on stdout and exits 0',
    async (flag) => {
      const res = await runHere([flag])
      const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
      expect(res).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    },
  )

  it('never repeats a token given in the wrong place: messages show its public id only', async () => {
    const url = dbUrl()
    const token = (await runHere(['token', 'create', '--name', 'x', '--database-url', url])).stdout.trim()
    const id = token.slice(4, 20)
    const secret = token.slice(21)
    for (const [args, code] of [
      [['serve', '--port', token, '--database-url', url], 2],
      [['token', 'create', '--name', 'y', '--scopes', token, '--database-url', url], 2],
      [['import', `${token}.jsonl`, '--database-url', url], 1],
      [['backup', join(tempDir(), `${token}.db`), '--database-url', url], 0],
      [[token], 2],
    ] as const) {
      const res = await runHere([...args])
      expect(res.code).toBe(code)
      expect(res.stderr).toContain(`pst_${id}_[redacted]`)
      expect(res.stderr).not.toContain(secret)
    }
  })

  it('token create counts --name in characters, not UTF-16 units, and refuses control and bidirectional formatting characters', async () => {
    const url = dbUrl()
    const sprouts = '🌱'.repeat(100)
    const created = await runHere(['token', 'create', '--name', sprouts, '--database-url', url])
    expect(created.code).toBe(0)
    const tooLong = await runHere(['token', 'create', '--name', `${sprouts}🌱`, '--database-url', url])
    expect(tooLong.code).toBe(2)
    expect(tooLong.stderr).toBe('plantstore: invalid --name: expected 1 to 100 characters\n')
    for (const name of ['tab\there', 'two\nlines', 'bell\u0007', 'escape\u001b[2J', 'next\u0085line']) {
      const res = await runHere(['token', 'create', '--name', name, '--database-url', url])
      expect(res.code).toBe(2)
      expect(res.stderr).toBe(
        'plantstore: invalid --name: control characters such as tab or newline are not allowed\n',
      )
    }
    for (const name of ['ci\u202Eredaeh', 'a\u2066b\u2069', 'mark\u200F']) {
      const res = await runHere(['token', 'create', '--name', name, '--database-url', url])
      expect(res.code).toBe(2)
      expect(res.stderr).toBe(
        'plantstore: invalid --name: bidirectional formatting characters such as U+202E are not allowed\n',
      )
    }
    const table = await runHere(['token', 'list', '--database-url', url])
    const lines = table.stdout.split('\n').filter((l) => l !== '')
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain(sprouts)
  })

  it('serve --help lists every setting with its env name and default', async () => {
    const res = await runHere(['serve', '--help'])
    expect(res.code).toBe(0)
    const help = res.stdout.replace(/\s+/g, ' ')
    for (const s of SERVE_SETTINGS) {
      expect(help).toContain(`--${s.flag}`)
      expect(help).toContain(`env: ${s.flag.toUpperCase().replace(/-/g, '_')}`)
      if (s.default !== undefined) expect(help).toContain(`default: ${s.default}`)
    }
  })
})
